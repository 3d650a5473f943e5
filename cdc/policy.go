package cdc

import "fmt"

// ErrorPolicy says what a consumer does with a message it cannot accept: a
// malformed one, or one that violates the protocol. The zero policy is Fail.
type ErrorPolicy uint8

// The policies of --on-error.
const (
	// Fail stops at the first bad message; everything accepted before it
	// stays accepted.
	Fail ErrorPolicy = iota
	// Skip counts the bad message, reports it and goes on.
	Skip
	// Quarantine stores the bad message's raw bytes, position and reason
	// durably, then goes on.
	Quarantine
)

// String returns the name used on the command line.
func (p ErrorPolicy) String() string {
	switch p {
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	case Quarantine:
		return "quarantine"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParseErrorPolicy accepts "fail", "skip" and "quarantine".
func ParseErrorPolicy(s string) (ErrorPolicy, error) {
	switch s {
	case "fail", "":
		return Fail, nil
	case "skip":
		return Skip, nil
	case "quarantine":
		return Quarantine, nil
	}
	return 0, fmt.Errorf("unknown error policy %q (want fail, skip or quarantine)", s)
}

// Validate refuses a policy that is none of Fail, Skip and Quarantine, as
// an *OptionError of --on-error.
func (p ErrorPolicy) Validate() error {
	if p > Quarantine {
		return &OptionError{Option: "--on-error", Reason: fmt.Sprintf("%v is not fail, skip or quarantine", p)}
	}
	return nil
}

// ValidateQuarantine is Validate for a policy given with a quarantine
// writer or without one (have): it also refuses Quarantine without a
// writer, with missing (the caller's error, which says where rejected
// input could go instead), and a writer under another policy, which
// would never be written, as an *OptionError of --quarantine.
func (p ErrorPolicy) ValidateQuarantine(have bool, missing error) error {
	if err := p.Validate(); err != nil {
		return err
	}
	switch {
	case p == Quarantine && !have:
		return missing
	case p != Quarantine && have:
		return &OptionError{Option: "--quarantine", Reason: "is only used with --on-error quarantine"}
	}
	return nil
}
