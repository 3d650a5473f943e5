package cdc

import (
	"fmt"
	"math"
)

// MaxTime is the largest time a message can carry.
const MaxTime = math.MaxUint64

// Kind says which statement a Message holds.
type Kind uint8

// The kinds of message. The zero Kind is invalid, so a zero Message is never
// mistaken for a statement.
const (
	KindUpdate Kind = iota + 1
	KindProgress
	KindFinish
)

// String returns the message tag used on the wire: "update", "progress" or
// "finish".
func (k Kind) String() string {
	switch k {
	case KindUpdate:
		return "update"
	case KindProgress:
		return "progress"
	case KindFinish:
		return "finish"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Update says that Data changes by exactly Diff at Time.
type Update struct {
	// Data is the canonical JSON encoding of the changed value.
	Data []byte
	Time uint64
	// Diff is never zero in a valid update.
	Diff int64
}

// Count is the number of distinct updates at one time.
type Count struct {
	Time  uint64
	Count uint64
}

// Progress says that every time t with Lower <= t < Upper holds exactly the
// number of distinct updates listed for t in Counts, or zero if t is not
// listed. When Unbounded is set, Upper is ignored and the statement covers
// every time from Lower on.
type Progress struct {
	Lower     uint64
	Upper     uint64
	Unbounded bool
	// Counts are sorted by time, with distinct times, each inside the
	// statement's range; decoders drop explicit zero counts.
	Counts []Count
}

// Covers reports whether t lies in [Lower, Upper).
func (p *Progress) Covers(t uint64) bool {
	return t >= p.Lower && (p.Unbounded || t < p.Upper)
}

// Last returns the last time the statement covers. A valid statement covers
// at least one time.
func (p *Progress) Last() uint64 {
	if p.Unbounded {
		return MaxTime
	}
	return p.Upper - 1
}

// CountAt returns the count the statement gives time t, which must be
// covered.
func (p *Progress) CountAt(t uint64) uint64 {
	lo, hi := 0, len(p.Counts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p.Counts[mid].Time < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(p.Counts) && p.Counts[lo].Time == t {
		return p.Counts[lo].Count
	}
	return 0
}

// Finish says that Time is over. It appears only in naive streams.
type Finish struct {
	Time uint64
}

// Message is one statement of a stream: the field named by Kind is set.
type Message struct {
	Kind     Kind
	Update   Update
	Progress Progress
	Finish   Finish
}

// NewUpdate returns an update message.
func NewUpdate(data []byte, time uint64, diff int64) Message {
	return Message{Kind: KindUpdate, Update: Update{Data: data, Time: time, Diff: diff}}
}

// NewProgress returns a bounded progress message.
func NewProgress(lower, upper uint64, counts ...Count) Message {
	return Message{Kind: KindProgress, Progress: Progress{Lower: lower, Upper: upper, Counts: counts}}
}

// NewFinish returns a finish message.
func NewFinish(time uint64) Message {
	return Message{Kind: KindFinish, Finish: Finish{Time: time}}
}

// Time returns the time under which the message is filed: an update's or a
// finish's time, and the last time a progress statement covers.
func (m *Message) Time() uint64 {
	switch m.Kind {
	case KindUpdate:
		return m.Update.Time
	case KindProgress:
		return m.Progress.Last()
	case KindFinish:
		return m.Finish.Time
	}
	return 0
}

// Validate checks the rules of SPEC section 2 that a decoder enforces: a
// known kind, a non-zero diff, lower < upper, and counts sorted, distinct,
// non-zero and inside [lower, upper). Decoded messages always pass; it is
// for messages built in code.
func (m *Message) Validate() error {
	switch m.Kind {
	case KindUpdate:
		if m.Update.Diff == 0 {
			return errorf("update has zero diff")
		}
		if len(m.Update.Data) == 0 {
			return errorf("update has no data")
		}
	case KindProgress:
		return m.Progress.validate()
	case KindFinish:
	default:
		return errorf("unknown message kind %d", m.Kind)
	}
	return nil
}

func (p *Progress) validate() error {
	if !p.Unbounded && p.Upper <= p.Lower {
		return errorf("progress upper %d is not above lower %d", p.Upper, p.Lower)
	}
	for i, c := range p.Counts {
		if !p.Covers(c.Time) {
			return errorf("count for time %d is outside [%d, %s)", c.Time, p.Lower, p.upperString())
		}
		if c.Count == 0 {
			return errorf("count for time %d is zero (leave zero counts out)", c.Time)
		}
		if i > 0 && p.Counts[i-1].Time >= c.Time {
			return errorf("counts are not sorted by distinct time at time %d", c.Time)
		}
	}
	return nil
}

func (p *Progress) upperString() string {
	if p.Unbounded {
		return "∞"
	}
	return fmt.Sprint(p.Upper)
}

// String renders the message in a short human form for errors and logs,
// e.g. update("k", t=7, +1) or progress[5, 8){7:2}.
func (m Message) String() string {
	switch m.Kind {
	case KindUpdate:
		return fmt.Sprintf("update(%s, t=%d, %+d)", abbreviate(m.Update.Data), m.Update.Time, m.Update.Diff)
	case KindProgress:
		p := &m.Progress
		s := fmt.Sprintf("progress[%d, %s){", p.Lower, p.upperString())
		for i, c := range p.Counts {
			if i == 8 {
				s += fmt.Sprintf(" …%d more", len(p.Counts)-i)
				break
			}
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("%d:%d", c.Time, c.Count)
		}
		return s + "}"
	case KindFinish:
		return fmt.Sprintf("finish(t=%d)", m.Finish.Time)
	}
	return "invalid message"
}

func abbreviate(b []byte) string {
	const max = 60
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + "…"
}
