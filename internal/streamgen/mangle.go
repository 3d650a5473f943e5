package streamgen

import (
	"container/heap"
	"fmt"
	"iter"
	"math"

	"github.com/cdclog/cdclog/cdc"
)

// Defaults of the command line's mangle flags.
const (
	DefaultMaxDelay  = 16
	DefaultMaxCopies = 3
)

// MangleOptions configures Mangle. The zero value passes the stream through
// unchanged (one copy of each message, no delay).
type MangleOptions struct {
	// Seed selects the duplication and reordering: equal options and input
	// give equal output, in every Go release.
	Seed int64
	// MaxDelay is the largest number of input messages a copy may be held
	// back by. Zero keeps the order.
	MaxDelay int
	// MaxCopies is the largest number of copies of one message; zero is
	// taken as one.
	MaxCopies int
}

// Validate reports options that Mangle would have to correct, as a
// *cdc.OptionError: a negative MaxDelay or MaxCopies (0, the zero value,
// is one copy; the command line has no such default and wants 1 at least).
func (o MangleOptions) Validate() error {
	switch {
	case o.MaxDelay < 0:
		return &cdc.OptionError{Option: "--max-delay", Reason: fmt.Sprintf("must not be negative, got %d", o.MaxDelay)}
	case o.MaxCopies < 0:
		return CopiesError(o.MaxCopies)
	}
	return nil
}

// CopiesError is the *cdc.OptionError of a copy count n below 1.
func CopiesError(n int) error {
	return &cdc.OptionError{Option: "--max-copies", Reason: fmt.Sprintf("must be at least 1, got %d", n)}
}

func (o MangleOptions) normalized() MangleOptions {
	o.MaxDelay = max(o.MaxDelay, 0)
	o.MaxCopies = max(o.MaxCopies, 1)
	return o
}

// Mangle duplicates and reorders a stream, deterministically by seed, the
// way an at-least-once transport with retries would.
//
// Each input message is emitted 1 to MaxCopies times (one copy three times
// out of four; otherwise 2 to MaxCopies, uniformly). Each copy is held back
// by d input messages, d in [0, MaxDelay]: zero half of the time, otherwise
// weighted towards small delays (the smaller of two uniform draws from 1 to
// MaxDelay). After the i-th input message (counting from 0) is read, every
// held copy due at i or earlier is emitted, in order of due position and
// then of arrival. So every copy of message i appears after message i is
// read and before message i+MaxDelay+1 is; when the input ends, everything
// still held is emitted. At most (MaxDelay+1)*MaxCopies copies are held.
//
// Negative options are taken as zero. Copies share the input's Data and
// Counts slices.
func Mangle(in iter.Seq[cdc.Message], opts MangleOptions) iter.Seq[cdc.Message] {
	o := opts.normalized()
	return func(yield func(cdc.Message) bool) {
		m := &mangler{opts: o, rng: newRNG(o.Seed, streamMangle)}
		pos := 0
		for msg := range in {
			m.hold(msg, pos)
			if !m.release(pos, yield) {
				return
			}
			pos++
		}
		m.release(math.MaxInt, yield)
	}
}

// mangler holds delayed copies in a heap keyed by (due position, arrival).
type mangler struct {
	opts    MangleOptions
	rng     *rng
	held    copyHeap
	arrival uint64
}

// hold draws the number of copies of msg and each copy's delay.
func (m *mangler) hold(msg cdc.Message, pos int) {
	for range m.copies() {
		heap.Push(&m.held, heldCopy{due: pos + m.delay(), arrival: m.arrival, msg: msg})
		m.arrival++
	}
}

// release yields every held copy due at pos or earlier, and false if the
// consumer stopped.
func (m *mangler) release(pos int, yield func(cdc.Message) bool) bool {
	for m.held.Len() > 0 && m.held[0].due <= pos {
		c := heap.Pop(&m.held).(heldCopy)
		if !yield(c.msg) {
			return false
		}
	}
	return true
}

func (m *mangler) copies() int {
	if m.opts.MaxCopies == 1 || m.rng.chance(3, 4) {
		return 1
	}
	return 2 + m.rng.intn(m.opts.MaxCopies-1)
}

func (m *mangler) delay() int {
	if m.opts.MaxDelay == 0 || m.rng.chance(1, 2) {
		return 0
	}
	a, b := m.rng.intn(m.opts.MaxDelay), m.rng.intn(m.opts.MaxDelay)
	return 1 + min(a, b)
}

type heldCopy struct {
	due     int
	arrival uint64
	msg     cdc.Message
}

// copyHeap is a min-heap of held copies by (due, arrival).
type copyHeap []heldCopy

func (h copyHeap) Len() int { return len(h) }
func (h copyHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].arrival < h[j].arrival
}
func (h copyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *copyHeap) Push(x any)   { *h = append(*h, x.(heldCopy)) }
func (h *copyHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = heldCopy{}
	*h = old[:len(old)-1]
	return c
}
