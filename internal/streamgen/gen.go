package streamgen

import (
	"fmt"
	"iter"

	"github.com/cdclog/cdclog/cdc"
)

// Kind selects the protocol of a generated stream.
type Kind uint8

// The kinds of stream Gen produces. The zero Kind is CDC.
const (
	// CDC is a consolidated stream of updates and progress statements.
	CDC Kind = iota
	// Naive is a stream of updates and finish messages, the input of
	// Convert.
	Naive
)

// String returns the name used on the command line: "cdc" or "naive".
func (k Kind) String() string {
	switch k {
	case CDC:
		return "cdc"
	case Naive:
		return "naive"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind accepts "cdc" and "naive".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "cdc", "":
		return CDC, nil
	case "naive":
		return Naive, nil
	}
	return 0, fmt.Errorf("unknown stream kind %q (want cdc or naive)", s)
}

// Shape selects how a generated stream marks the end of its times.
type Shape uint8

// The shapes. The zero Shape is Mixed.
const (
	// Mixed mostly closes one time per statement, and now and then varies
	// the shape to exercise a receiver: see the package documentation.
	Mixed Shape = iota
	// Simple closes every time with its own statement: progress
	// [t, t+1) in a CDC stream, finish(t) in a naive one.
	Simple
)

// String returns the name used on the command line: "mixed" or "simple".
func (s Shape) String() string {
	switch s {
	case Mixed:
		return "mixed"
	case Simple:
		return "simple"
	}
	return fmt.Sprintf("shape(%d)", uint8(s))
}

// ParseShape accepts "mixed" and "simple".
func ParseShape(s string) (Shape, error) {
	switch s {
	case "mixed", "":
		return Mixed, nil
	case "simple":
		return Simple, nil
	}
	return 0, fmt.Errorf("unknown shape %q (want mixed or simple)", s)
}

// DefaultKeys is the number of distinct data values when GenOptions.Keys is
// zero, and MaxKeys the largest number Gen accepts.
const (
	DefaultKeys = 8
	MaxKeys     = 1 << 30
)

// GenOptions configures Gen. The zero value is a valid configuration: a
// mixed-shape CDC stream over DefaultKeys keys from time 0, forever, seed 0.
type GenOptions struct {
	// Seed selects the stream: equal options give equal streams, in every
	// Go release.
	Seed int64
	// Times is how many consecutive times the stream covers. Zero means
	// "forever": the stream stops only when its consumer stops pulling (or
	// at the last time below cdc.MaxTime).
	Times uint64
	// Start is the first time.
	Start uint64
	// Keys is the number of distinct data values; zero means DefaultKeys.
	Keys int
	// Kind selects a CDC or a naive stream.
	Kind Kind
	// Shape varies how times are closed.
	Shape Shape
	// Final ends the stream with a statement that nothing follows: after
	// the last time, a CDC stream gets the progress statement [end, ∞)
	// without counts, and a naive stream a finish at cdc.MaxTime (which
	// Converter turns into that statement). A receiver then sees every
	// time complete. Without Final the stream just stops, and a receiver
	// waits for a statement about the time after the last. A stream
	// without end (Times zero) never reaches its final statement.
	Final bool
}

// Validate reports options that Gen would have to correct, as a
// *cdc.OptionError: Keys outside 0 to MaxKeys (0, the zero value, means
// DefaultKeys; the command line has no such default and wants 1 at
// least), a Kind or Shape that is none of the constants, a Start of
// cdc.MaxTime.
func (o GenOptions) Validate() error {
	switch {
	case o.Keys < 0 || o.Keys > MaxKeys:
		return KeysError(o.Keys)
	case o.Kind > Naive:
		return &cdc.OptionError{Option: "--kind", Reason: fmt.Sprintf("%d is not cdc or naive", o.Kind)}
	case o.Shape > Simple:
		return &cdc.OptionError{Option: "--shape", Reason: fmt.Sprintf("%d is not mixed or simple", o.Shape)}
	case o.Start == cdc.MaxTime:
		return &cdc.OptionError{Option: "--start", Reason: fmt.Sprintf("must be below %d", uint64(cdc.MaxTime))}
	}
	return nil
}

// KeysError is the *cdc.OptionError of a key count n outside 1 to
// MaxKeys.
func KeysError(n int) error {
	return &cdc.OptionError{Option: "--keys", Reason: fmt.Sprintf("must be between 1 and %d, got %d", MaxKeys, n)}
}

// normalized fills in defaults and bounds the time range so that every
// upper bound fits in a uint64.
func (o GenOptions) normalized() GenOptions {
	if o.Keys <= 0 {
		o.Keys = DefaultKeys
	}
	o.Keys = min(o.Keys, MaxKeys)
	if o.Start == cdc.MaxTime {
		o.Start = cdc.MaxTime - 1
	}
	return o
}

// end returns the first time after the stream: Start+Times, or cdc.MaxTime
// when Times is zero or the sum would not fit.
func (o GenOptions) end() uint64 {
	if o.Times == 0 || o.Times > cdc.MaxTime-o.Start {
		return cdc.MaxTime
	}
	return o.Start + o.Times
}

// Gen returns a deterministic example stream. Every iteration of the
// returned sequence starts again from the beginning and yields the same
// messages. Memory use does not grow with the length of the stream.
//
// Invalid options (see Validate) are corrected rather than reported: a
// negative Keys means DefaultKeys, a Keys above MaxKeys means MaxKeys, a
// Start of cdc.MaxTime means cdc.MaxTime-1, and an unknown Kind or Shape
// yields nothing.
//
// The messages own their Data and Counts slices.
func Gen(opts GenOptions) iter.Seq[cdc.Message] {
	o := opts.normalized()
	return func(yield func(cdc.Message) bool) {
		var done bool
		switch o.Kind {
		case CDC:
			done = genCDC(o, yield)
		case Naive:
			done = genNaive(o, yield)
		}
		if done && o.Final {
			yield(o.final())
		}
	}
}

// final returns the statement that ends a finished stream: no update at any
// time from the stream's end on.
func (o GenOptions) final() cdc.Message {
	if o.Kind == Naive {
		return cdc.NewFinish(cdc.MaxTime)
	}
	return cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: o.end(), Unbounded: true}}
}
