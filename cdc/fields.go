package cdc

import (
	"fmt"
	"slices"
)

// This file holds the rules that the JSON and msgpack decoders share once
// they have read a message's fields: which fields a tag has, which are
// required, and how a progress statement is checked and normalised.

// The message tags and what a decoder says when none fits.
const tagsWanted = `(want "update", "progress" or "finish")`

// Error prefixes naming the part of a message an error is about.
const (
	inUpdate   = "update: "
	inProgress = "progress: "
	inFinish   = "finish: "
)

// Field bits, to detect duplicate and missing fields.
const (
	fData uint8 = 1 << iota
	fTime
	fDiff
	fLower
	fUpper
	fCounts
	fCount
)

// updateFields collects an update's fields.
// The JSON and msgpack decoders each have their own loop over a message's
// fields (json_decode.go, msgpack_decode.go), alike line for line.
// Sharing one loop through an interface over the two decoders made the
// decoder and its scratch space escape to the heap: measured, the general
// JSON path went from 0 to 1 allocation per update and from 1 to 3 per
// progress statement, 20-50% slower. The fields are collected here and
// checked once, in build.
type updateFields struct {
	seen uint8
	u    Update
}

func (f *updateFields) build(m *Message) error {
	switch {
	case f.seen&fData == 0:
		return errorf(inUpdate + `missing "data"`)
	case f.seen&fTime == 0:
		return errorf(inUpdate + `missing "time"`)
	case f.seen&fDiff == 0:
		return errorf(inUpdate + `missing "diff"`)
	}
	*m = Message{Kind: KindUpdate, Update: f.u}
	return nil
}

// progressFields collects a progress statement's fields, in either the
// primary shape (lower, upper, counts) or the seed's (time, count).
type progressFields struct {
	seen         uint8
	lower, upper uint64
	unbounded    bool // upper was null or []
	time, count  uint64
	counts       []Count // in input order, zeros included
}

// build checks the fields and writes the statement to m: counts sorted,
// zeros dropped, in a freshly allocated slice (nil when empty).
func (p *progressFields) build(m *Message) error {
	const seed, primary = fTime | fCount, fLower | fUpper | fCounts
	if p.seen&seed != 0 {
		if p.seen&primary != 0 {
			return errorf(inProgress + `has both the seed shape's "time"/"count" and "lower"/"upper"/"counts"`)
		}
		return p.buildSeed(m)
	}
	if p.seen&fLower == 0 {
		return errorf(inProgress + `missing "lower"`)
	}
	pr := Progress{Lower: p.lower, Upper: p.upper, Unbounded: p.unbounded || p.seen&fUpper == 0}
	if pr.Unbounded {
		pr.Upper = 0
	} else if pr.Upper <= pr.Lower {
		return errorf(inProgress+`"upper" (%d) is not above "lower" (%d)`, pr.Upper, pr.Lower)
	}
	for _, c := range p.counts {
		if !pr.Covers(c.Time) {
			return errorf(inProgress+"count for time %d is outside [%d, %s)", c.Time, pr.Lower, pr.upperString())
		}
	}
	var err error
	if pr.Counts, err = normaliseCounts(p.counts); err != nil {
		return err
	}
	*m = Message{Kind: KindProgress, Progress: pr}
	return nil
}

func (p *progressFields) buildSeed(m *Message) error {
	switch {
	case p.seen&fTime == 0:
		return errorf(inProgress + `missing "time" (seed shape with "count")`)
	case p.seen&fCount == 0:
		return errorf(inProgress + `missing "count" (seed shape with "time")`)
	}
	pr := Progress{Lower: p.time, Upper: p.time + 1}
	if p.time == MaxTime {
		pr.Upper, pr.Unbounded = 0, true
	}
	if p.count != 0 {
		pr.Counts = []Count{{Time: p.time, Count: p.count}}
	}
	*m = Message{Kind: KindProgress, Progress: pr}
	return nil
}

// normaliseCounts sorts cs (in place), rejects two different counts for
// one time, and returns the distinct non-zero counts in a fresh slice.
func normaliseCounts(cs []Count) ([]Count, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if !slices.IsSortedFunc(cs, cmpCountTime) {
		slices.SortStableFunc(cs, cmpCountTime)
	}
	n := 0
	for k, c := range cs {
		if k > 0 && cs[k-1].Time == c.Time {
			if cs[k-1].Count != c.Count {
				return nil, errorf(inProgress+"two different counts for time %d (%d and %d)", c.Time, cs[k-1].Count, c.Count)
			}
			continue
		}
		if c.Count != 0 {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]Count, 0, n)
	for k, c := range cs {
		if c.Count != 0 && (k == 0 || cs[k-1].Time != c.Time) {
			out = append(out, c)
		}
	}
	return out, nil
}

func cmpCountTime(a, b Count) int {
	switch {
	case a.Time < b.Time:
		return -1
	case a.Time > b.Time:
		return 1
	}
	return 0
}

// countFields collects one entry of "counts".
type countFields struct {
	seen uint8
	c    Count
}

func (f *countFields) check(k int) error {
	switch {
	case f.seen&fTime == 0:
		return errorf(inProgress+`counts[%d]: missing "time"`, k)
	case f.seen&fCount == 0:
		return errorf(inProgress+`counts[%d]: missing "count"`, k)
	}
	return nil
}

// duplicate reports a field given twice.
func duplicate(what, field string) error {
	return errorf("%sduplicate field %q", what, field)
}

// unknownField reports a field the message part does not have.
func unknownField(what string, key []byte, want string) error {
	return errorf("%sunknown field %q (want %s)", what, key, want)
}

// countElem names entry k of "counts" as a value.
func countElem(k int) string { return fmt.Sprintf("%scounts[%d] ", inProgress, k) }

// countWhat names entry k of "counts" in an error.
func countWhat(k int) string { return fmt.Sprintf("%scounts[%d]: ", inProgress, k) }
