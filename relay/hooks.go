package relay

import (
	"context"

	"github.com/cdclog/cdclog/recovery"
)

// startHooked is an input of a Run with BeforeStart or OnStart set: the
// hooks around its Start, with the input as given to Run.
type startHooked struct {
	recovery.Source
	given recovery.Source
	r     *Run
}

// Unwrap returns the source hooked (reporterOf looks inside).
func (s startHooked) Unwrap() recovery.Source { return s.Source }

// Start calls BeforeStart, starts the source, and once it started,
// OnStart.
func (s startHooked) Start(ctx context.Context, cursor []byte) error {
	if s.r.BeforeStart != nil {
		s.r.BeforeStart(s.given)
	}
	err := s.Source.Start(ctx, cursor)
	if err == nil && s.r.OnStart != nil {
		s.r.OnStart(s.given)
	}
	return err
}

// Committed passes commits on to a source that wants them.
func (s startHooked) Committed(cursor []byte) {
	if a, ok := s.Source.(recovery.Acknowledger); ok {
		a.Committed(cursor)
	}
}

// offsetter is a source that says how far it has read, in bytes (the
// input package's file and stdin sources).
type offsetter interface{ Offset() int64 }

// Offset returns how far src has read, in bytes, when it says (the input
// package's file and stdin sources, as ParseInputs and InputList.Open
// give them), else 0: in OnStart, where the input resumes (the bytes
// before it were read by an earlier run), and in OnRead, how far it got.
func Offset(src recovery.Source) int64 {
	if o, ok := src.(offsetter); ok {
		return o.Offset()
	}
	return 0
}
