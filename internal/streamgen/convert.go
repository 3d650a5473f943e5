package streamgen

import (
	"fmt"
	"maps"
	"math/big"
	"math/bits"
	"slices"
	"strconv"

	"github.com/cdclog/cdclog/cdc"
)

// Converter turns a naive stream (updates, and finish messages saying that
// a time is over) into a consolidated CDC stream, one message at a time.
// The zero Converter is ready to use.
//
// It sums the diffs of each (data, time) and drops sums of zero. On
// finish(t) it emits the consolidated updates of every buffered time up to
// t, in canonical order (time, then data bytes), followed by one progress
// statement covering every time since the previous finish: [previous+1,
// t+1), or [0, t+1) for the first finish, with the non-zero counts (an
// unbounded upper when t is cdc.MaxTime). Updates at times after t stay
// buffered for a later finish.
//
// Sums are exact whatever the order of the diffs (see diffSum): only a
// consolidated sum beyond int64 is an error, when its time is emitted.
//
// Rejected, with a *ConvertError: a progress statement (the input is a CDC
// stream, not a naive one), an update or finish at a time that an earlier
// finish already closed, a finish that would emit a sum of diffs beyond
// int64, and a message that fails cdc.Message.Validate. A rejected message
// leaves the Converter unchanged.
type Converter struct {
	pending  map[uint64]map[string]diffSum // time -> data -> sum of diffs
	finished bool                          // a finish has been seen
	last     cdc.Message                   // the latest finish
	lastAt   cdc.Pos
	index    int64 // messages pushed so far
	stats    ConvertStats
}

// ConvertStats counts what a Converter has seen and emitted.
type ConvertStats struct {
	// UpdatesIn and Finishes count the accepted input messages.
	UpdatesIn uint64
	Finishes  uint64
	// UpdatesOut counts the consolidated updates emitted, by Push and
	// Flush.
	UpdatesOut uint64
}

// ConvertError reports a message that a Converter cannot accept.
type ConvertError struct {
	// At is the position given to Push; Index is the message's index among
	// all pushed messages, counting from 0.
	At    cdc.Pos
	Index int64
	Msg   cdc.Message
	// Reason says what is wrong, without the position.
	Reason string
}

func (e *ConvertError) Error() string {
	where := e.At.String()
	if e.At == (cdc.Pos{}) {
		where = "message " + strconv.FormatInt(e.Index+1, 10)
	}
	if e.Msg.Kind == 0 { // from Flush: no message
		return "at the end of the input: " + e.Reason
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Msg, e.Reason)
}

// Stats returns the counts so far.
func (c *Converter) Stats() ConvertStats { return c.stats }

// Push takes the next message of the naive stream, read at position at
// (used in errors only; the zero Pos is fine), and returns the messages
// that it completes: nothing for an update, the finished times' updates and
// one progress statement for a finish.
func (c *Converter) Push(m cdc.Message, at cdc.Pos) ([]cdc.Message, error) {
	index := c.index
	c.index++
	fail := func(format string, args ...any) error {
		return &ConvertError{At: at, Index: index, Msg: m, Reason: fmt.Sprintf(format, args...)}
	}
	if err := m.Validate(); err != nil {
		return nil, fail("invalid message: %v", err)
	}
	switch m.Kind {
	case cdc.KindUpdate:
		return nil, c.add(m.Update, fail)
	case cdc.KindFinish:
		if c.closed(m.Finish.Time) {
			return nil, fail("time %d was already finished by %s", m.Finish.Time, c.earlier())
		}
		if reason := c.overflow(c.bufferedTimes(m.Finish.Time)); reason != "" {
			return nil, fail("%s", reason)
		}
		return c.finish(m, at), nil
	case cdc.KindProgress:
		return nil, fail("progress statement in a naive stream (convert reads updates and finish messages; is the input already a CDC stream?)")
	}
	return nil, fail("unknown message kind")
}

// closed reports whether time t is at or below the latest finish.
func (c *Converter) closed(t uint64) bool {
	return c.finished && t <= c.last.Finish.Time
}

// earlier describes the latest finish and its position, for errors.
func (c *Converter) earlier() string {
	if c.lastAt == (cdc.Pos{}) {
		return c.last.String()
	}
	return fmt.Sprintf("%s at %s", c.last, c.lastAt)
}

// add buffers one update, summing it with earlier ones at the same data and
// time.
func (c *Converter) add(u cdc.Update, fail func(string, ...any) error) error {
	if c.closed(u.Time) {
		return fail("update at time %d, but %s already closed every time up to %d",
			u.Time, c.earlier(), c.last.Finish.Time)
	}
	sums := c.pending[u.Time]
	if sums == nil {
		if c.pending == nil {
			c.pending = make(map[uint64]map[string]diffSum)
		}
		sums = make(map[string]diffSum)
		c.pending[u.Time] = sums
	}
	sum := sums[string(u.Data)]
	sum.add(u.Diff)
	if sum.isZero() {
		delete(sums, string(u.Data))
	} else {
		sums[string(u.Data)] = sum
	}
	c.stats.UpdatesIn++
	return nil
}

// overflow says which consolidated sum of the given times does not fit an
// int64, or returns "".
func (c *Converter) overflow(times []uint64) string {
	for _, t := range times {
		for _, data := range slices.Sorted(maps.Keys(c.pending[t])) {
			if s := c.pending[t][data]; !s.fits() {
				return fmt.Sprintf("the diffs of %s at time %d sum to %s, beyond a 64-bit integer", data, t, s)
			}
		}
	}
	return ""
}

// finish emits the buffered times up to the finish's time and a progress
// statement covering every time since the previous finish.
func (c *Converter) finish(m cdc.Message, at cdc.Pos) []cdc.Message {
	t := m.Finish.Time
	var lower uint64
	if c.finished {
		lower = c.last.Finish.Time + 1
	}
	var out []cdc.Message
	var counts []cdc.Count
	for _, bt := range c.bufferedTimes(t) {
		n := len(out)
		out = c.emitTime(out, bt)
		if len(out) > n {
			counts = append(counts, cdc.Count{Time: bt, Count: uint64(len(out) - n)})
		}
	}
	progress := cdc.NewProgress(lower, t+1, counts...)
	if t == cdc.MaxTime {
		progress.Progress.Upper, progress.Progress.Unbounded = 0, true
	}
	c.finished, c.last, c.lastAt = true, m, at
	c.stats.Finishes++
	return append(out, progress)
}

// bufferedTimes returns the buffered times up to and including t, sorted.
func (c *Converter) bufferedTimes(t uint64) []uint64 {
	var times []uint64
	for bt := range c.pending {
		if bt <= t {
			times = append(times, bt)
		}
	}
	slices.Sort(times)
	return times
}

// emitTime appends the consolidated updates of time t to out in canonical
// order and forgets them.
func (c *Converter) emitTime(out []cdc.Message, t uint64) []cdc.Message {
	sums := c.pending[t]
	for _, data := range slices.Sorted(maps.Keys(sums)) {
		out = append(out, cdc.NewUpdate([]byte(data), t, sums[data].int64()))
	}
	delete(c.pending, t)
	c.stats.UpdatesOut += uint64(len(sums))
	return out
}

// Flush emits, in canonical order and without progress, the consolidated
// updates of times that no finish has closed, forgets them, and returns how
// many it emitted: a non-zero count means the naive stream ended before
// finishing every time it touched, and a receiver will never see those
// times complete. A sum of diffs beyond int64 among them is a
// *ConvertError, and then nothing is emitted or forgotten. The Converter
// stays usable.
func (c *Converter) Flush() (out []cdc.Message, unfinished int, err error) {
	times := slices.Sorted(maps.Keys(c.pending))
	if reason := c.overflow(times); reason != "" {
		return nil, 0, &ConvertError{Index: c.index, Reason: reason}
	}
	for _, t := range times {
		out = c.emitTime(out, t)
	}
	return out, len(out), nil
}

// diffSum is an exact sum of int64 diffs, as a two's-complement 128-bit
// integer: adding 2^63 diffs of the largest magnitude still fits, so a sum
// never overflows, and the order of the diffs cannot matter (with an int64
// sum, [2^63-1, +1, -1] overflowed where [-1, 2^63-1, +1] did not).
type diffSum struct {
	hi int64
	lo uint64
}

func (s *diffSum) add(d int64) {
	lo, carry := bits.Add64(s.lo, uint64(d), 0)
	s.hi += d>>63 + int64(carry) // d>>63 sign-extends d to 128 bits
	s.lo = lo
}

func (s diffSum) isZero() bool { return s.hi == 0 && s.lo == 0 }

// fits reports whether the sum is an int64.
func (s diffSum) fits() bool { return s.hi == int64(s.lo)>>63 }

// int64 returns the sum, which must fit.
func (s diffSum) int64() int64 { return int64(s.lo) }

// String returns the sum in decimal.
func (s diffSum) String() string {
	v := new(big.Int).SetInt64(s.hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(s.lo)).String()
}
