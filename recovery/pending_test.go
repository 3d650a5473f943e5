package recovery

import (
	"bytes"
	"context"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// heldBack returns msgs with every progress statement moved to the end.
func heldBack(msgs []cdc.Message) []cdc.Message {
	var updates, progress []cdc.Message
	for _, m := range msgs {
		if m.Kind == cdc.KindProgress {
			progress = append(progress, m)
		} else {
			updates = append(updates, m)
		}
	}
	return append(updates, progress...)
}

// TestAPendingStateOnDiskSurvivesReopensAndGC: with a pending-memory
// budget of 2 KiB, the updates of a held-back stream pile up on disk
// (Status says so: a memory horizon, most messages beyond it); closing,
// compacting with gc and reopening keep them, and the statements then
// release exactly the in-memory receiver's output; a read-only Status of
// the database whose pending state is on disk rebuilds only what an open
// holds in memory, and Pending lists every pending time.
func TestAPendingStateOnDiskSurvivesReopensAndGC(t *testing.T) {
	msgs := heldBack(mangled(3, cleanStream(3, 0, 3000)))
	want := inMemory(t, msgs)
	cut := 0
	for cut < len(msgs) && msgs[cut].Kind != cdc.KindProgress {
		cut++
	}
	path := dbPath(t)
	o := Options{PendingMemory: 2 << 10, BatchMessages: 500}
	p := openTest(t, path, o)
	appendAll(t, p, msgs[:cut], 300)
	st, err := p.Status()
	if err != nil || st.MemoryHorizon == nil || st.PendingOnDisk < int64(cut/2) || st.PendingUpdates > cut/10 {
		t.Fatalf("after the updates: %+v, %v", st, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := r.Status()
	if err != nil || rs.MemoryHorizon == nil || *rs.MemoryHorizon != *st.MemoryHorizon || rs.PendingOnDisk != st.PendingOnDisk ||
		rs.PendingUpdates != st.PendingUpdates {
		t.Fatalf("read-only status %+v, %v; the processor's %+v", rs, err, st)
	}
	pending, err := r.Pending()
	if err != nil || len(pending) < 1000 {
		t.Fatalf("pending: %d times, %v", len(pending), err)
	}
	r.Close()
	if _, err := GC(path, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	p = openTest(t, path, o)
	half := cut + (len(msgs)-cut)/2
	appendAll(t, p, msgs[cut:half], 300)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(path, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	p = openTest(t, path, o)
	appendAll(t, p, msgs[half:], 300)
	if _, err := p.Append(context.Background(), msgs, nil); err != nil { // everything again: all duplicates or stale
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := storedOutput(t, path); !bytes.Equal(got, want) {
		t.Fatalf("output of %d bytes, the in-memory receiver's %d", len(got), len(want))
	}
}
