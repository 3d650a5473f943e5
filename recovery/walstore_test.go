package recovery

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
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

// TestScanPendingListsWhatPendingDoesAWindowAtATime: on a database whose
// pending state is mostly on disk (counts known for most times, the first
// time's statement missing), Reader.ScanPending, which holds a window of
// times in memory at a time, lists exactly what Pending, which loads the
// whole pending WAL, lists; and it stops with the error of its function.
func TestScanPendingListsWhatPendingDoesAWindowAtATime(t *testing.T) {
	var msgs []cdc.Message
	for _, m := range mangled(7, cleanStream(7, 0, 6000)) {
		if m.Kind != cdc.KindProgress || m.Progress.Lower > 0 {
			msgs = append(msgs, m)
		}
	}
	path := dbPath(t)
	p := openTest(t, path, Options{PendingMemory: 2 << 10, BatchMessages: 500})
	appendAll(t, p, msgs, 300)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, err := r.Pending()
	if err != nil || len(want) < 4000 {
		t.Fatalf("Pending: %d times, %v", len(want), err)
	}
	var got []demangle.PendingTime
	if err := r.ScanPending(func(pt *demangle.PendingTime) error { got = append(got, *pt); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ScanPending listed %d times, Pending %d; first difference at %d", len(got), len(want), firstPendingDiff(got, want))
	}
	stop := errors.New("stop")
	n := 0
	if err := r.ScanPending(func(*demangle.PendingTime) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("ScanPending stopped with %v after %d times, want %v after 1", err, n, stop)
	}
}

// firstPendingDiff returns the first index where a and b differ.
func firstPendingDiff(a, b []demangle.PendingTime) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
