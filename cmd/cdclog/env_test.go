package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func TestReportErrorGivesALibrarysOptionErrorTheUsageExit(t *testing.T) {
	oe := &cdc.OptionError{Option: "--keys", Reason: "must be between 1 and 9, got 0"}
	for _, err := range []error{
		fmt.Errorf("gen: %w", oe),
		withCode(exitFailure, fmt.Errorf("gen: %w", oe)), // a code an action attached does not win
	} {
		var stderr bytes.Buffer
		if code := reportError(&stderr, err); code != exitUsage {
			t.Errorf("%v: exit code %d, want %d", err, code, exitUsage)
		}
		want := "cdclog: gen: --keys must be between 1 and 9, got 0\nRun 'cdclog --help' or 'cdclog COMMAND --help' for usage.\n"
		if stderr.String() != want {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
	}
}
