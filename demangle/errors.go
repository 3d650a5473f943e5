package demangle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cdclog/cdclog/cdc"
)

// ViolationKind names one of the protocol violations of SPEC section 1.
type ViolationKind uint8

// The protocol violations the receiver reports.
const (
	// ConflictingDiff: two updates with the same data and time and
	// different diffs.
	ConflictingDiff ViolationKind = iota + 1
	// TooManyUpdates: more distinct updates at a time than its count.
	TooManyUpdates
	// UpdateAtZeroCount: an update at a time that a progress statement
	// says holds no update.
	UpdateAtZeroCount
	// ConflictingCounts: two progress statements give one time different
	// counts.
	ConflictingCounts
)

// String returns a short name for the violation, stable for scripts.
func (k ViolationKind) String() string {
	switch k {
	case ConflictingDiff:
		return "conflicting-diff"
	case TooManyUpdates:
		return "too-many-updates"
	case UpdateAtZeroCount:
		return "update-at-zero-count"
	case ConflictingCounts:
		return "conflicting-counts"
	}
	return fmt.Sprintf("violation(%d)", uint8(k))
}

// ViolationError reports a message that contradicts an earlier one. The
// receiver's state is unchanged by the offending message.
type ViolationError struct {
	Kind ViolationKind
	// Time is the time both messages disagree about.
	Time uint64
	// Msg is the offending message and At its position.
	Msg cdc.Message
	At  cdc.Pos
	// Earlier is the conflicting message the receiver already held, and
	// EarlierAt its position.
	Earlier   cdc.Message
	EarlierAt cdc.Pos
	// Detail explains the disagreement in words.
	Detail string
	// Deferred is set when the violation was found after Msg had been
	// accepted: it arrived beyond the receiver's horizon, was kept in
	// the store unjudged, and is dropped now that its time is in memory
	// (see Receiver.Deferred). Its claims about other times stand.
	Deferred bool
}

// Error returns the position of the offending message, then Reason.
func (e *ViolationError) Error() string { return e.At.String() + ": " + e.Reason() }

// Reason describes the violation without the offending message's
// position: the kind, the time, both messages, where the earlier one was,
// and the detail. It is the Reason of the message's cdc.Reject.
func (e *ViolationError) Reason() string {
	s := fmt.Sprintf("protocol violation (%s) at time %d: %s conflicts with %s at %s: %s",
		e.Kind, e.Time, e.Msg, e.Earlier, e.EarlierAt, e.Detail)
	if e.Deferred {
		s += " (found when time " + fmt.Sprint(e.Time) + " was loaded from beyond the memory horizon; dropped)"
	}
	return s
}

// RejectOf returns the cdc.Reject for message m at position at, which Push
// refused with err: the message in JSON, and the error's text without the
// position it starts with.
func RejectOf(m *cdc.Message, at cdc.Pos, err error) cdc.Reject {
	reason := err.Error()
	var v *ViolationError
	if errors.As(err, &v) {
		reason = v.Reason()
	} else {
		reason = strings.TrimPrefix(reason, at.String()+": ")
	}
	return cdc.Reject{Pos: at, Raw: cdc.AppendJSON(nil, m), Reason: reason}
}

// IsViolation reports whether err is, or wraps, a *ViolationError.
func IsViolation(err error) bool {
	var v *ViolationError
	return errors.As(err, &v)
}

func newViolation(k ViolationKind, t uint64, m cdc.Message, at cdc.Pos,
	earlier cdc.Message, earlierAt cdc.Pos, format string, args ...any) *ViolationError {
	return &ViolationError{Kind: k, Time: t, Msg: m, At: at, Earlier: earlier, EarlierAt: earlierAt,
		Detail: fmt.Sprintf(format, args...)}
}
