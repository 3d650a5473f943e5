package recovery

import (
	"bytes"
	"context"
	"testing"
	"time"

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

// batchCounter is an Observer that keeps each commit's figures.
type batchCounter struct{ batches []BatchStats }

func (c *batchCounter) Committed(b BatchStats)     { c.batches = append(c.batches, b) }
func (c *batchCounter) OutputSynced(time.Duration) {}

// TestARequestThatReleasesMuchIsCommittedInPartsOfBoundedOutput: one
// request holding a held-back stream's statements releases every time at
// once; it is committed in batches of at most about twice BatchMessages
// records each (plus what one message releases), its result delivered once
// with the sum, its cursor with the last part, and the output is the
// in-memory receiver's.
func TestARequestThatReleasesMuchIsCommittedInPartsOfBoundedOutput(t *testing.T) {
	msgs := heldBack(mangled(5, cleanStream(5, 0, 400)))
	want := inMemory(t, msgs)
	cut := 0
	for cut < len(msgs) && msgs[cut].Kind != cdc.KindProgress {
		cut++
	}
	path := dbPath(t)
	obs := &batchCounter{}
	const batch = 64
	p := openTest(t, path, Options{BatchMessages: batch, Observer: obs})
	appendAll(t, p, msgs[:cut], 1000)
	obs.batches = nil
	ctx := context.Background()
	w, err := p.Submit(ctx, Request{Msgs: msgs[cut:], Cursor: "in", CursorValue: []byte("end")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != len(msgs)-cut || res.Output != int(p.OutputEnd()-1) {
		t.Errorf("result %+v: want %d applied and all %d records", res, len(msgs)-cut, p.OutputEnd()-1)
	}
	if len(obs.batches) < 3 {
		t.Fatalf("%d commits: the request was not cut", len(obs.batches))
	}
	messages, most := 0, 0
	for _, b := range obs.batches {
		messages += b.Messages
		most = max(most, b.Totals.Output)
	}
	if messages != len(msgs)-cut {
		t.Errorf("the commits carried %d messages, the request %d", messages, len(msgs)-cut)
	}
	if most > 2*batch+200 { // a statement releases at most a few times of 40-odd updates
		t.Errorf("a commit held %d output records, for a bound of %d", most, 2*batch)
	}
	t.Logf("%d records released in %d commits, at most %d each", res.Output, len(obs.batches), most)
	if string(p.Cursor("in")) != "end" {
		t.Errorf("cursor %q after the last part", p.Cursor("in"))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := storedOutput(t, path); !bytes.Equal(got, want) {
		t.Fatalf("output of %d bytes, the in-memory receiver's %d", len(got), len(want))
	}
}
