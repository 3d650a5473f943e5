package cdc

import (
	"errors"
	"testing"
)

func TestValidateQuarantineRefusesAPolicyAndWriterThatDoNotGoTogether(t *testing.T) {
	missing := &OptionError{Option: "--on-error", Reason: "quarantine needs somewhere to write"}
	for _, tc := range []struct {
		p    ErrorPolicy
		have bool
		want string // "" for accepted
	}{
		{Fail, false, ""},
		{Skip, false, ""},
		{Quarantine, true, ""},
		{Quarantine, false, missing.Error()},
		{Fail, true, "--quarantine is only used with --on-error quarantine"},
		{Skip, true, "--quarantine is only used with --on-error quarantine"},
		{Quarantine + 1, true, "--on-error " + (Quarantine + 1).String() + " is not fail, skip or quarantine"},
	} {
		err := tc.p.ValidateQuarantine(tc.have, missing)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v with a writer %v: %v, want accepted", tc.p, tc.have, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, ErrOption)):
			t.Errorf("%v with a writer %v: %v, want %q matching ErrOption", tc.p, tc.have, err, tc.want)
		}
	}
}
