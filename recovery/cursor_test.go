package recovery

import (
	"context"
	"errors"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// TestChainedRequestsStopAtTheFirstFailure: a producer keeps several
// requests in flight, each expecting the cursor value of the one before
// (CursorCheck). When one fails, the requests submitted after it fail with
// ErrCursorMoved without being applied, so no later request commits a
// position past the messages the failed one left out.
func TestChainedRequestsStopAtTheFirstFailure(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{BatchDelay: 50e6}) // one group commit for all
	ctx := context.Background()
	good := cleanStream(5, 0, 10)
	bad := []cdc.Message{cdc.NewUpdate([]byte(`"x"`), 20, 1), cdc.NewUpdate([]byte(`"x"`), 20, 3), cdc.NewUpdate([]byte(`"y"`), 20, 1)}
	later := cleanStream(6, 30, 40)
	reqs := []Request{
		{Msgs: good, Cursor: "in", CursorValue: []byte("1"), CursorCheck: true},
		{Msgs: bad, Cursor: "in", CursorValue: []byte("2"), CursorCheck: true, CursorPrev: []byte("1")},
		{Msgs: later, Cursor: "in", CursorValue: []byte("3"), CursorCheck: true, CursorPrev: []byte("2")},
	}
	var pend []*Pending
	for _, r := range reqs {
		w, err := p.Submit(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, w)
	}
	var res [3]Result
	var errs [3]error
	for i, w := range pend {
		res[i], errs[i] = w.Wait(ctx)
	}
	if errs[0] != nil || errs[1] == nil || !errors.Is(errs[2], ErrCursorMoved) {
		t.Fatalf("errors %v, want nil, a violation, ErrCursorMoved", errs)
	}
	if res[1].Applied != 1 || res[2].Applied != 0 || res[2].Accepted != 0 {
		t.Fatalf("applied %d of the failing request and %d of the next, want 1 and 0", res[1].Applied, res[2].Applied)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = openTest(t, path, Options{})
	defer p.Close()
	if got := string(p.Cursor("in")); got != "1" {
		t.Fatalf("cursor %q after the failure, want 1", got)
	}
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	for _, m := range good {
		if m.Kind == cdc.KindUpdate {
			want++
		}
	}
	if st.AcceptedUpdates != want+1 {
		t.Fatalf("%d updates accepted, want %d (the first request and one of the failing one)", st.AcceptedUpdates, want+1)
	}
	// Without the check, requests are independent (several producers).
	w, _ := p.Submit(ctx, Request{Msgs: later, Cursor: "in", CursorValue: []byte("3")})
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
