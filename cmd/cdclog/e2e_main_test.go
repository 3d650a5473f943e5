package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/cdclog/cdclog/internal/testbin"
)

// childModeEnv, when set in the environment, makes the test binary run a
// child mode of the end-to-end tests (see runChildMode) instead of the
// tests: the usual way to have a child process running test code that a
// test can kill.
const childModeEnv = "CDCLOG_TEST_CHILD"

// TestMain runs a child mode when asked, and otherwise the tests, removing
// the cdclog binary that the end-to-end tests built (internal/testbin).
// It is this package's only TestMain.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		code, err := runChildMode(mode)
		if err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", mode, err)
		}
		os.Exit(code)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// runChildMode runs the named child mode and returns its exit code.
func runChildMode(mode string) (int, error) {
	switch mode {
	case "consumer":
		return runConsumerChild()
	}
	return 2, fmt.Errorf("unknown child mode %q", mode)
}
