package demangle

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cockroachdb/datadriven"
)

// TestReceiverScripts runs the scripts in testdata/receiver: each one a
// topic of SPEC section 1, written as the messages pushed and what the
// receiver makes of them. Run with -rewrite to update the expectations
// after a deliberate change, and read the diff.
//
// Commands:
//
//	new [start=T] [limit=BYTES] [budget=BYTES] [window=N]
//	    a fresh receiver with frontier T (cdclog --start), emitting no
//	    message longer than BYTES (default cdc.MaxMessageSize); with a
//	    budget, a MemStore takes what passes it (the receiver sheds after
//	    each push that asks to, and loads windows of N times)
//	push
//	<one JSON Lines message per line>
//	    pushes each line (the input's position is its line number,
//	    counted from the last "new") and prints, per line, the outcome,
//	    then the messages it released; a rejected message prints its
//	    error, and whether the state is unchanged (it must be)
//	status
//	    the frontier, why it is stuck (as inspect status says), the
//	    pending times and the counters
//	restore
//	    saves the state with MarshalBinary and continues on a receiver
//	    restored from it
func TestReceiverScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/receiver", func(t *testing.T, path string) {
		var d scriptDriver
		datadriven.RunTest(t, path, d.run)
	})
}

type scriptDriver struct {
	r    *Receiver
	line int64
}

func (d *scriptDriver) run(t *testing.T, td *datadriven.TestData) string {
	if d.r == nil && td.Cmd != "new" {
		d.r = New(0)
	}
	switch td.Cmd {
	case "new":
		var start, window uint64
		limit, budget := 0, 0
		td.MaybeScanArgs(t, "start", &start)
		td.MaybeScanArgs(t, "limit", &limit)
		td.MaybeScanArgs(t, "budget", &budget)
		td.MaybeScanArgs(t, "window", &window)
		d.r, d.line = New(start), 0
		d.r.maxMessage = limit
		if budget > 0 {
			d.r.UseStore(&MemStore{}, int64(budget))
			d.r.window = window
		}
		return ""
	case "push":
		return d.push(t, td.Input)
	case "status":
		return status(d.r)
	case "restore":
		b, err := d.r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var again Receiver
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		again.maxMessage = d.r.maxMessage
		d.r = &again
		return fmt.Sprintf("restored from %d bytes", len(b))
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

func (d *scriptDriver) push(t *testing.T, input string) string {
	var b strings.Builder
	for _, line := range strings.Split(input, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		d.line++
		at := cdc.Pos{Source: "in", Line: d.line}
		var m cdc.Message
		if err := cdc.ParseJSON([]byte(line), &m); err != nil {
			fmt.Fprintf(&b, "%d: decode error: %v\n", d.line, err)
			continue
		}
		before := stateOf(t, d.r)
		out, o, err := d.r.Push(nil, &m, at)
		switch {
		case err != nil && o == Accepted:
			// A statement with claims both rejected and held.
			fmt.Fprintf(&b, "%d: %s\n   its other claims are held\n", d.line, rejection(&m, at, err))
		case err != nil:
			fmt.Fprintf(&b, "%d: %s\n", d.line, rejection(&m, at, err))
			if !bytes.Equal(stateOf(t, d.r), before) {
				b.WriteString("   STATE CHANGED by a rejected message\n")
			} else {
				b.WriteString("   state unchanged\n")
			}
			continue
		default:
			fmt.Fprintf(&b, "%d: %s\n", d.line, o)
		}
		for _, r := range out {
			fmt.Fprintf(&b, "   emit %s\n", cdc.AppendJSON(nil, &r))
		}
		for _, v := range d.r.Deferred() {
			fmt.Fprintf(&b, "   deferred violation by the message at %s: %s\n", v.At, v.Reason())
		}
		if d.r.NeedShed() {
			if err := d.r.Shed(); err != nil {
				t.Fatal(err)
			}
			h, _ := d.r.Horizon()
			fmt.Fprintf(&b, "   shed: horizon %d\n", h)
		}
	}
	return b.String()
}

// rejection renders a Push error without the offending message's
// position, which the line number already gives.
func rejection(m *cdc.Message, at cdc.Pos, err error) string {
	if IsViolation(err) {
		return "violation: " + RejectOf(m, at, err).Reason
	}
	return "error: " + RejectOf(m, at, err).Reason
}

// stateOf returns the receiver's state without its counters.
func stateOf(t *testing.T, r *Receiver) []byte {
	s := r.Stats()
	r.SetStats(Stats{})
	defer r.SetStats(s)
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func status(r *Receiver) string {
	var b strings.Builder
	if f, done := r.Frontier(); done {
		b.WriteString("frontier: done\n")
	} else {
		fmt.Fprintf(&b, "frontier: %d\n", f)
	}
	fmt.Fprintf(&b, "stuck: %s\n", r.Stuck())
	for _, p := range r.Pending() {
		fmt.Fprintf(&b, "pending: time %d holds %d", p.Time, p.Held)
		if p.Known {
			fmt.Fprintf(&b, " of %d", p.Expected)
		}
		b.WriteString("\n")
	}
	if h, spilled := r.Horizon(); spilled {
		fmt.Fprintf(&b, "horizon: %d; %d messages accepted beyond it, not judged yet\n", h, r.Cold())
	}
	s := r.Stats()
	fmt.Fprintf(&b, "stats: updates %d, progress %d, duplicates %d, stale %d, violations %d, emitted %d updates at %d times\n",
		s.Updates, s.Progress, s.Duplicates, s.Stale, s.Violations, s.EmittedUpdates, s.EmittedTimes)
	return b.String()
}
