package cdc

import (
	"errors"
	"fmt"
	"testing"
)

func TestOptionErrorReadsAsOneSentenceAndMatchesErrOption(t *testing.T) {
	err := fmt.Errorf("merge: %w", &OptionError{Option: "--quarantine", Reason: "is only used with --on-error quarantine"})
	if got, want := err.Error(), "merge: --quarantine is only used with --on-error quarantine"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrOption) {
		t.Error("errors.Is(err, ErrOption) = false, want true")
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "--quarantine" {
		t.Errorf("errors.As found %+v, want the OptionError of --quarantine", oe)
	}
	if errors.Is(errors.New("invalid option"), ErrOption) {
		t.Error("an unrelated error with the same text matches ErrOption")
	}
}

func TestErrorPolicyValidateRefusesAnUnknownPolicy(t *testing.T) {
	for _, p := range []ErrorPolicy{Fail, Skip, Quarantine} {
		if err := p.Validate(); err != nil {
			t.Errorf("%v: Validate() = %v, want nil", p, err)
		}
	}
	err := ErrorPolicy(3).Validate()
	if !errors.Is(err, ErrOption) || err.Error() != "--on-error policy(3) is not fail, skip or quarantine" {
		t.Errorf("policy 3: Validate() = %v, want an OptionError of --on-error", err)
	}
}
