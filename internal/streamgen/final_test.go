package streamgen

import (
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// TestGenFinalAppendsOneStatementToTheSameStream checks that Final changes
// nothing but the end: the open stream of a seed (the one TestGenStreamIsPinned
// pins) followed by one statement saying no time from the end on has
// updates.
func TestGenFinalAppendsOneStatementToTheSameStream(t *testing.T) {
	for _, o := range genVariants() {
		t.Run(o.Kind.String()+"/"+o.Shape.String(), func(t *testing.T) {
			o.Seed, o.Start = 3, 40
			open := renderAll(collect(Gen(o)))
			o.Final = true
			closed := collect(Gen(o))
			if !slices.Equal(renderAll(closed[:len(closed)-1]), open) {
				t.Fatal("the final stream does not start with the open stream")
			}
			last := closed[len(closed)-1]
			want := cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 340, Unbounded: true}}
			if o.Kind == Naive {
				want = cdc.NewFinish(cdc.MaxTime)
			}
			if render(last) != render(want) {
				t.Fatalf("final message %s, want %s", last, want)
			}
		})
	}
}

// TestGenFinalStreamEndsCompleteThroughMangleAndConvert runs final streams
// the way the command line's examples do: gen | mangle | demangle, and
// gen --kind naive | convert | mangle | demangle (convert refuses an update
// after the finish of its time, which mangling would produce). Each ends
// with the receiver done.
func TestGenFinalStreamEndsCompleteThroughMangleAndConvert(t *testing.T) {
	mangle := func(s iter.Seq[cdc.Message]) iter.Seq[cdc.Message] {
		return Mangle(s, MangleOptions{Seed: 4, MaxDelay: 50, MaxCopies: 3})
	}
	for _, shape := range []Shape{Mixed, Simple} {
		t.Run(shape.String(), func(t *testing.T) {
			cdcStream := Gen(GenOptions{Seed: 5, Times: 300, Shape: shape, Final: true})
			if err := receiveAll(mangle(cdcStream)); err != nil {
				t.Fatalf("gen | mangle | demangle: %v", err)
			}
			naive := Gen(GenOptions{Seed: 5, Times: 300, Shape: shape, Kind: Naive, Final: true})
			converted, unfinished, err := convertAll(collect(naive))
			if err != nil || unfinished > 0 {
				t.Fatalf("convert: %v, %d updates unfinished", err, unfinished)
			}
			if last := converted[len(converted)-1]; last.Kind != cdc.KindProgress || !last.Progress.Unbounded {
				t.Fatalf("convert ends with %s, want an unbounded progress statement", last)
			}
			if err := receiveAll(mangle(slices.Values(converted))); err != nil {
				t.Fatalf("gen --kind naive | convert | mangle | demangle: %v", err)
			}
		})
	}
}

// receiveAll pushes a stream through a receiver and fails unless every
// time ends complete.
func receiveAll(s iter.Seq[cdc.Message]) error {
	r := demangle.New(0)
	var out []cdc.Message
	for m := range s {
		var err error
		if out, _, err = r.Push(out[:0], &m, cdc.Pos{}); err != nil {
			return err
		}
	}
	if st := r.Stuck(); !st.Done {
		return fmt.Errorf("the receiver is not done: %s", st)
	}
	return nil
}
