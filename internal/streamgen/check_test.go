package streamgen

import (
	"fmt"
	"iter"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// collect gathers a sequence into a slice.
func collect(seq iter.Seq[cdc.Message]) []cdc.Message {
	return slices.Collect(seq)
}

// render writes a message in full (String abbreviates long data), for
// comparing streams.
func render(m cdc.Message) string {
	switch m.Kind {
	case cdc.KindUpdate:
		return fmt.Sprintf("U %s %d %d", m.Update.Data, m.Update.Time, m.Update.Diff)
	case cdc.KindProgress:
		p := m.Progress
		return fmt.Sprintf("P %d %d %v %v", p.Lower, p.Upper, p.Unbounded, p.Counts)
	case cdc.KindFinish:
		return fmt.Sprintf("F %d", m.Finish.Time)
	}
	return "?"
}

func renderAll(msgs []cdc.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = render(m)
	}
	return out
}

// checkCDC verifies that msgs is a valid, consolidated, in-order CDC stream
// whose progress statements cover exactly [start, end): every message is
// valid; no two updates share (data, time); statements that overlap agree;
// each time's count is its number of updates; and every update comes
// before the first statement covering its time.
func checkCDC(msgs []cdc.Message, start, end uint64) error {
	stated := map[uint64]uint64{} // time -> count, for every covered time
	updates := map[uint64]map[string]bool{}
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("message %d %s: %v", i, m, err)
		}
		switch m.Kind {
		case cdc.KindUpdate:
			u := m.Update
			if _, ok := stated[u.Time]; ok {
				return fmt.Errorf("message %d %s: after progress covering its time", i, m)
			}
			if updates[u.Time] == nil {
				updates[u.Time] = map[string]bool{}
			}
			if updates[u.Time][string(u.Data)] {
				return fmt.Errorf("message %d %s: second update of its data and time", i, m)
			}
			updates[u.Time][string(u.Data)] = true
		case cdc.KindProgress:
			if err := checkProgress(m.Progress, stated, updates); err != nil {
				return fmt.Errorf("message %d %s: %v", i, m, err)
			}
		default:
			return fmt.Errorf("message %d %s: not a CDC message", i, m)
		}
	}
	for t := range updates {
		if _, ok := stated[t]; !ok {
			return fmt.Errorf("time %d has updates but no progress", t)
		}
	}
	if uint64(len(stated)) != end-start {
		return fmt.Errorf("progress covers %d times, want [%d, %d)", len(stated), start, end)
	}
	for t := range stated {
		if t < start || t >= end {
			return fmt.Errorf("progress covers time %d outside [%d, %d)", t, start, end)
		}
	}
	return nil
}

// checkProgress records a bounded statement's counts in stated, checking
// them against earlier statements and against the updates seen.
func checkProgress(p cdc.Progress, stated map[uint64]uint64, updates map[uint64]map[string]bool) error {
	if p.Unbounded {
		return fmt.Errorf("unbounded statement in a finite check")
	}
	for t := p.Lower; t < p.Upper; t++ {
		n := p.CountAt(t)
		if old, ok := stated[t]; ok && old != n {
			return fmt.Errorf("count %d for time %d, earlier %d", n, t, old)
		}
		if got := uint64(len(updates[t])); got != n {
			return fmt.Errorf("count %d for time %d, but %d updates", n, t, got)
		}
		stated[t] = n
	}
	return nil
}
