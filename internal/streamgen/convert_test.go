package streamgen

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// convertAll pushes msgs through a fresh Converter and flushes it,
// stopping at the first error.
func convertAll(msgs []cdc.Message) (out []cdc.Message, unfinished int, err error) {
	var c Converter
	for _, m := range msgs {
		emitted, err := c.Push(m, cdc.Pos{})
		if err != nil {
			return out, 0, err
		}
		out = append(out, emitted...)
	}
	rest, unfinished, err := c.Flush()
	return append(out, rest...), unfinished, err
}

// modelConvert is the simple model of Converter on a valid naive stream:
// sum every (data, time) over the whole stream, then walk the finishes;
// each one owns the times since the previous finish.
func modelConvert(msgs []cdc.Message) []cdc.Message {
	sums := map[uint64]map[string]int64{}
	var finishes []uint64
	for _, m := range msgs {
		if m.Kind == cdc.KindFinish {
			finishes = append(finishes, m.Finish.Time)
			continue
		}
		u := m.Update
		if sums[u.Time] == nil {
			sums[u.Time] = map[string]int64{}
		}
		sums[u.Time][string(u.Data)] += u.Diff
	}
	timeUpdates := func(t uint64) []cdc.Message {
		var keys []string
		for k, v := range sums[t] {
			if v != 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []cdc.Message
		for _, k := range keys {
			out = append(out, cdc.NewUpdate([]byte(k), t, sums[t][k]))
		}
		return out
	}
	var out []cdc.Message
	lower := uint64(0)
	for _, f := range finishes {
		var counts []cdc.Count
		for t := lower; t <= f; t++ {
			ups := timeUpdates(t)
			out = append(out, ups...)
			if len(ups) > 0 {
				counts = append(counts, cdc.Count{Time: t, Count: uint64(len(ups))})
			}
		}
		out = append(out, cdc.NewProgress(lower, f+1, counts...))
		lower = f + 1
	}
	var rest []uint64
	for t := range sums {
		if t >= lower {
			rest = append(rest, t)
		}
	}
	slices.Sort(rest)
	for _, t := range rest {
		out = append(out, timeUpdates(t)...)
	}
	return out
}

// naiveStream draws a valid naive stream over a few keys and times: updates
// at or after the earliest open time, finishes that may close several times
// at once and may leave updates after the last finish.
func naiveStream(t *rapid.T) []cdc.Message {
	keys := []string{`"a"`, `"b"`, `"c"`, `{"id":1}`, `[1,2]`}
	open := rapid.Uint64Range(0, 3).Draw(t, "start")
	n := rapid.IntRange(0, 80).Draw(t, "n")
	var msgs []cdc.Message
	for range n {
		ahead := rapid.Uint64Range(0, 2).Draw(t, "ahead")
		if rapid.IntRange(0, 4).Draw(t, "op") == 0 {
			msgs = append(msgs, cdc.NewFinish(open+ahead))
			open += ahead + 1
			continue
		}
		data := rapid.SampledFrom(keys).Draw(t, "data")
		diff := rapid.SampledFrom([]int64{-3, -2, -1, 1, 2, 3}).Draw(t, "diff")
		msgs = append(msgs, cdc.NewUpdate([]byte(data), open+ahead, diff))
	}
	return msgs
}

func TestConverterMatchesModelOnRandomNaiveStreams(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := naiveStream(t)
		got, unfinished, err := convertAll(msgs)
		if err != nil {
			t.Fatalf("valid stream rejected: %v", err)
		}
		want := modelConvert(msgs)
		if !slices.Equal(renderAll(got), renderAll(want)) {
			t.Fatalf("converted\n%s\nmodel\n%s", strings.Join(renderAll(got), "\n"), strings.Join(renderAll(want), "\n"))
		}
		trailing := 0
		for i := len(got) - 1; i >= 0 && got[i].Kind == cdc.KindUpdate; i-- {
			trailing++
		}
		if unfinished != trailing {
			t.Fatalf("Flush reports %d unfinished updates, stream ends with %d updates", unfinished, trailing)
		}
	})
}

// TestConverterRejectsAndStaysUnchanged interleaves bad messages into a
// valid naive stream: each is rejected with its index, and the output is
// what the valid messages alone give.
func TestConverterRejectsAndStaysUnchanged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		valid := naiveStream(t)
		var c Converter
		var got []cdc.Message
		last, finished := uint64(0), false
		index := int64(0)
		for _, m := range valid {
			if bad, ok := badMessage(t, last, finished); ok {
				_, err := c.Push(bad, cdc.Pos{})
				var ce *ConvertError
				if !errors.As(err, &ce) || ce.Index != index {
					t.Fatalf("%s at index %d: got error %v", bad, index, err)
				}
				index++
			}
			out, err := c.Push(m, cdc.Pos{})
			if err != nil {
				t.Fatalf("valid %s rejected: %v", m, err)
			}
			index++
			got = append(got, out...)
			if m.Kind == cdc.KindFinish {
				last, finished = m.Finish.Time, true
			}
		}
		rest, _, err := c.Flush()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rest...)
		if want := modelConvert(valid); !slices.Equal(renderAll(got), renderAll(want)) {
			t.Fatalf("rejected messages changed the output")
		}
	})
}

// badMessage sometimes draws a message the Converter must reject, given the
// latest finish.
func badMessage(t *rapid.T, last uint64, finished bool) (cdc.Message, bool) {
	kind := rapid.IntRange(0, 7).Draw(t, "bad")
	switch {
	case kind == 0:
		return cdc.NewProgress(0, 1), true
	case kind == 1:
		return cdc.NewUpdate([]byte(`"a"`), last+1, 0), true
	case kind == 2 && finished:
		return cdc.NewUpdate([]byte(`"a"`), rapid.Uint64Range(0, last).Draw(t, "closed"), 1), true
	case kind == 3 && finished:
		return cdc.NewFinish(rapid.Uint64Range(0, last).Draw(t, "closed")), true
	}
	return cdc.Message{}, false
}

func TestConverterErrorsNameBothPositions(t *testing.T) {
	var c Converter
	at := func(line int64) cdc.Pos { return cdc.Pos{Source: "in.jsonl", Line: line} }
	if _, err := c.Push(cdc.NewFinish(5), at(3)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Push(cdc.NewUpdate([]byte(`"k"`), 4, 1), at(9))
	if err == nil {
		t.Fatal("update at a finished time accepted")
	}
	for _, want := range []string{"in.jsonl:9", "in.jsonl:3", "finish(t=5)", `update("k", t=4, +1)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestConverterErrorWithoutPositionCountsMessages(t *testing.T) {
	var c Converter
	c.Push(cdc.NewUpdate([]byte(`"k"`), 0, 1), cdc.Pos{})
	_, err := c.Push(cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}), cdc.Pos{})
	if err == nil || !strings.HasPrefix(err.Error(), "message 2: ") || !strings.Contains(err.Error(), "naive") {
		t.Fatalf("error %v, want it to name message 2 and say the stream should be naive", err)
	}
}

// The sum of a (data, time)'s diffs is what matters, not the order in
// which they come: the consolidation is exact, and only a consolidated
// sum beyond int64 is refused, by the finish that would emit it.
func TestConverterSumsDiffsExactlyInAnyOrder(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		diffs []int64
		want  int64 // 0: the sum does not fit, the finish fails
		sum   string
	}{
		{[]int64{maxI, 1, -1}, maxI, ""},
		{[]int64{-1, maxI, 1}, maxI, ""},
		{[]int64{1, maxI, -1}, maxI, ""},
		{[]int64{minI, -1, 1}, minI, ""},
		{[]int64{maxI, maxI, minI, minI, 5}, 3, ""},
		{[]int64{maxI, maxI, -maxI}, maxI, ""},
		{[]int64{maxI, 1}, 0, "9223372036854775808"},
		{[]int64{minI, -1}, 0, "-9223372036854775809"},
		{[]int64{minI, minI, minI}, 0, "-27670116110564327424"},
	} {
		for _, order := range [][]int64{tc.diffs, reversed(tc.diffs)} {
			var c Converter
			for _, d := range order {
				if _, err := c.Push(cdc.NewUpdate([]byte(`"k"`), 0, d), cdc.Pos{}); err != nil {
					t.Fatalf("%v: update %d refused: %v", order, d, err)
				}
			}
			out, err := c.Push(cdc.NewFinish(0), cdc.Pos{Source: "in", Line: 9})
			if tc.want != 0 {
				if err != nil || len(out) != 2 || out[0].Update.Diff != tc.want {
					t.Errorf("%v: finish gives %v, %v; want diff %d", order, out, err, tc.want)
				}
				continue
			}
			var ce *ConvertError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "in:9") || !strings.Contains(err.Error(), tc.sum) {
				t.Errorf("%v: finish gives %v, %v; want an error naming in:9 and the sum %s", order, out, err, tc.sum)
				continue
			}
			// The finish left everything as it was: an update that brings
			// the sum back into range makes it succeed.
			back := int64(-1)
			if tc.diffs[0] < 0 {
				back = 1
			}
			for !c.pending[0][`"k"`].fits() {
				c.Push(cdc.NewUpdate([]byte(`"k"`), 0, back*maxI), cdc.Pos{})
			}
			if _, err := c.Push(cdc.NewFinish(0), cdc.Pos{}); err != nil {
				t.Errorf("%v: after bringing the sum back: %v", order, err)
			}
		}
	}
}

func TestConverterFlushRefusesASumBeyondInt64(t *testing.T) {
	var c Converter
	for _, d := range []int64{math.MaxInt64, math.MaxInt64} {
		c.Push(cdc.NewUpdate([]byte(`"k"`), 3, d), cdc.Pos{})
	}
	out, n, err := c.Flush()
	if err == nil || len(out) != 0 || n != 0 || !strings.Contains(err.Error(), "end of the input") || !strings.Contains(err.Error(), "18446744073709551614") {
		t.Fatalf("Flush = %v, %d, %v", out, n, err)
	}
}

func reversed(s []int64) []int64 {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func TestConverterFinishAtMaxTimeIsUnbounded(t *testing.T) {
	var c Converter
	c.Push(cdc.NewUpdate([]byte(`"k"`), cdc.MaxTime, 1), cdc.Pos{})
	out, err := c.Push(cdc.NewFinish(cdc.MaxTime), cdc.Pos{})
	if err != nil {
		t.Fatal(err)
	}
	p := out[len(out)-1].Progress
	if !p.Unbounded || p.Lower != 0 || len(p.Counts) != 1 || p.Counts[0].Time != cdc.MaxTime {
		t.Fatalf("finish at the last time gives %s", out[len(out)-1])
	}
	if _, err := c.Push(cdc.NewFinish(cdc.MaxTime), cdc.Pos{}); err == nil {
		t.Fatal("a second finish at the last time accepted")
	}
}

func TestConverterFlushEmitsUnfinishedUpdatesWithoutProgress(t *testing.T) {
	var c Converter
	for _, m := range []cdc.Message{
		cdc.NewUpdate([]byte(`"b"`), 3, 1),
		cdc.NewFinish(1),
		cdc.NewUpdate([]byte(`"a"`), 3, 2),
		cdc.NewUpdate([]byte(`"c"`), 2, 1),
		cdc.NewUpdate([]byte(`"c"`), 2, -1), // cancels
	} {
		if _, err := c.Push(m, cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	out, unfinished, err := c.Flush()
	want := []string{`U "a" 3 2`, `U "b" 3 1`}
	if err != nil || unfinished != 2 || !slices.Equal(renderAll(out), want) {
		t.Fatalf("Flush = %v, %d; want %v, 2", renderAll(out), unfinished, want)
	}
	if s := c.Stats(); s.UpdatesIn != 4 || s.UpdatesOut != 2 || s.Finishes != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestConvertingGeneratedNaiveStreamsGivesValidCDC(t *testing.T) {
	for _, o := range []GenOptions{
		{Kind: Naive, Times: 2000, Seed: 1},
		{Kind: Naive, Times: 500, Seed: 2, Keys: 3, Start: 40, Shape: Simple},
		{Kind: Naive, Times: 300, Seed: 3, Keys: 100},
	} {
		out, unfinished, err := convertAll(collect(Gen(o)))
		if err != nil || unfinished != 0 {
			t.Fatalf("%+v: unfinished %d, error %v", o, unfinished, err)
		}
		// The first statement starts at 0, even when the stream starts later.
		if err := checkCDC(out, 0, o.Start+o.Times); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	}
}
