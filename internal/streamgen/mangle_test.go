package streamgen

import (
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/optiontest"
	"pgregory.net/rapid"
)

// numbered yields n finish messages whose times are their indexes, and
// keeps in *read how many the consumer has pulled.
func numbered(n int, read *int) iter.Seq[cdc.Message] {
	return func(yield func(cdc.Message) bool) {
		for i := range n {
			*read = i + 1
			if !yield(cdc.NewFinish(uint64(i))) {
				return
			}
		}
	}
}

func defaultMangle(seed int64) MangleOptions {
	return MangleOptions{Seed: seed, MaxDelay: DefaultMaxDelay, MaxCopies: DefaultMaxCopies}
}

func TestMangleSameSeedGivesSameOutput(t *testing.T) {
	in := Gen(GenOptions{Times: 500})
	a := renderAll(collect(Mangle(in, defaultMangle(3))))
	b := renderAll(collect(Mangle(in, defaultMangle(3))))
	if !slices.Equal(a, b) {
		t.Fatal("two runs with seed 3 differ")
	}
}

func TestMangleDifferentSeedsGiveDifferentOutput(t *testing.T) {
	in := Gen(GenOptions{Times: 500})
	a := renderAll(collect(Mangle(in, defaultMangle(3))))
	b := renderAll(collect(Mangle(in, defaultMangle(4))))
	if slices.Equal(a, b) {
		t.Fatal("seeds 3 and 4 give the same output")
	}
}

func TestMangleZeroOptionsPassTheStreamThrough(t *testing.T) {
	in := collect(Gen(GenOptions{Times: 300}))
	out := collect(Mangle(slices.Values(in), MangleOptions{Seed: 99}))
	if !slices.Equal(renderAll(in), renderAll(out)) {
		t.Fatal("zero MaxDelay and MaxCopies changed the stream")
	}
}

// TestMangleKeepsEveryMessageWithinItsWindow checks the promises of Mangle
// on random options: every input message appears 1 to MaxCopies times,
// nothing else appears, and every copy of message i is emitted after
// message i is read and before message i+MaxDelay+1 is.
func TestMangleKeepsEveryMessageWithinItsWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		opts := MangleOptions{
			Seed:      rapid.Int64().Draw(t, "seed"),
			MaxDelay:  rapid.IntRange(0, 40).Draw(t, "maxDelay"),
			MaxCopies: rapid.IntRange(1, 6).Draw(t, "maxCopies"),
		}
		read := 0
		copies := make([]int, n)
		for m := range Mangle(numbered(n, &read), opts) {
			i := int(m.Finish.Time)
			if m.Kind != cdc.KindFinish || i >= n {
				t.Fatalf("output %s is not an input message", m)
			}
			copies[i]++
			if read < i+1 || read > i+opts.MaxDelay+1 {
				t.Fatalf("copy of message %d emitted when %d messages were read (window %d)", i, read, opts.MaxDelay)
			}
		}
		for i, c := range copies {
			if c < 1 || c > opts.MaxCopies {
				t.Fatalf("message %d emitted %d times, want 1..%d", i, c, opts.MaxCopies)
			}
		}
	})
}

// TestMangleHoldsAtMostTheWindow drives the mangler directly: after each
// release, no more than MaxDelay*MaxCopies copies are held.
func TestMangleHoldsAtMostTheWindow(t *testing.T) {
	opts := MangleOptions{Seed: 2, MaxDelay: 7, MaxCopies: 4}
	m := &mangler{opts: opts, rng: newRNG(opts.Seed, streamMangle)}
	most := 0
	for pos := range 50_000 {
		m.hold(cdc.NewFinish(uint64(pos)), pos)
		m.release(pos, func(cdc.Message) bool { return true })
		most = max(most, m.held.Len())
	}
	if most > opts.MaxDelay*opts.MaxCopies {
		t.Fatalf("held %d copies, bound %d", most, opts.MaxDelay*opts.MaxCopies)
	}
}

func TestMangleStopsWhenTheConsumerStops(t *testing.T) {
	read, n := 0, 0
	for range Mangle(numbered(1_000_000, &read), defaultMangle(1)) {
		n++
		if n == 1000 {
			break
		}
	}
	if read > 1000+DefaultMaxDelay+1 {
		t.Fatalf("read %d messages to emit 1000", read)
	}
}

func TestMangleDefaultsDuplicateAndReorder(t *testing.T) {
	const n = 20_000
	read := 0
	copies := make([]int, n)
	var late, prev int // late: copies emitted after a later message's copy
	for m := range Mangle(numbered(n, &read), defaultMangle(5)) {
		i := int(m.Finish.Time)
		copies[i]++
		if i < prev {
			late++
		}
		prev = max(prev, i)
	}
	hist := map[int]int{}
	for _, c := range copies {
		hist[c]++
	}
	if single := float64(hist[1]) / n; single < 0.72 || single > 0.78 {
		t.Errorf("%.3f of messages have one copy, want about 0.75", single)
	}
	if hist[2] == 0 || hist[3] == 0 || len(hist) != 3 {
		t.Errorf("copy counts %v, want 1, 2 and 3", hist)
	}
	if late < n/4 {
		t.Errorf("only %d of the copies come out of order", late)
	}
}

func TestMangleOptionsValidate(t *testing.T) {
	cases := []struct {
		opts MangleOptions
		want string // "" when valid
	}{
		{MangleOptions{}, ""},
		{MangleOptions{MaxDelay: 100, MaxCopies: 10}, ""},
		{MangleOptions{MaxDelay: -1}, "--max-delay must not be negative, got -1"},
		{MangleOptions{MaxCopies: -1}, "--max-copies must be at least 1, got -1"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c.opts), func(t *testing.T) { optiontest.Check(t, c.opts.Validate(), c.want) })
	}
}
