package recovery

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

func TestTheSameRejectIsQuarantinedOnce(t *testing.T) {
	path := dbPath(t)
	bad := cdc.Reject{Pos: cdc.Pos{Source: "stdin", Line: 3, Offset: 40}, Raw: []byte("not json"), Reason: "malformed JSON"}
	other := bad
	other.Pos.Line, other.Pos.Offset = 4, 49
	violation := cdc.NewUpdate([]byte(`"k"`), 1, -1)
	run := func() Result {
		p := openTest(t, path, Options{OnError: cdc.Quarantine})
		defer p.Close()
		msgs := []cdc.Message{cdc.NewUpdate([]byte(`"k"`), 1, 1), violation}
		pos := []cdc.Pos{{Source: "stdin", Line: 1}, {Source: "stdin", Line: 2, Offset: 20}}
		w, err := p.Submit(context.Background(), Request{Msgs: msgs, Pos: pos, Rejects: []cdc.Reject{bad, other}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// And again within the run.
		w, _ = p.Submit(context.Background(), Request{Rejects: []cdc.Reject{bad}})
		if r2, err := w.Wait(context.Background()); err != nil || r2.Quarantined != 0 {
			t.Fatalf("the same reject again in one run: %+v, %v", r2, err)
		}
		return res
	}
	if res := run(); res.Quarantined != 3 {
		t.Fatalf("first run quarantined %d, want 3 (two rejects and a violation)", res.Quarantined)
	}
	if res := run(); res.Quarantined != 0 {
		t.Fatalf("the same input read again quarantined %d more", res.Quarantined)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	r.Quarantine(func(*QuarantineRecord) error { n++; return nil })
	if n != 3 {
		t.Fatalf("%d quarantine records, want 3", n)
	}
}

// A protocol violation is one reject whoever meets it: the durable
// processor's quarantine record, its error under policy Fail and the
// in-memory receiver's (cdclog demangle, through demangle.RejectOf) give
// the same position, bytes and reason, in the receiver's words.
func TestAViolationIsRejectedAsTheReceiverWordsIt(t *testing.T) {
	first, bad := cdc.NewUpdate([]byte(`"k"`), 1, 1), cdc.NewUpdate([]byte(`"k"`), 1, -1)
	pos := []cdc.Pos{{Source: "in.jsonl", Line: 1}, {Source: "in.jsonl", Line: 2, Offset: 40}}

	recv := demangle.New(0)
	if _, _, err := recv.Push(nil, &first, pos[0]); err != nil {
		t.Fatal(err)
	}
	_, _, err := recv.Push(nil, &bad, pos[1])
	if !demangle.IsViolation(err) {
		t.Fatalf("the receiver took the conflicting diff: %v", err)
	}
	want := demangle.RejectOf(&bad, pos[1], err)
	if want.String() != err.Error() {
		t.Fatalf("the reject reads %q, the receiver's error %q", want.String(), err.Error())
	}

	path := dbPath(t)
	p := openTest(t, path, Options{OnError: cdc.Quarantine})
	res, err := p.Append(context.Background(), []cdc.Message{first, bad}, pos)
	p.Close()
	if err != nil || res.Quarantined != 1 {
		t.Fatalf("quarantine: %+v, %v", res, err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []cdc.Reject
	r.Quarantine(func(q *QuarantineRecord) error { got = append(got, q.Reject); return nil })
	r.Close()
	if len(got) != 1 || got[0].String() != want.String() || !bytes.Equal(got[0].Raw, want.Raw) || got[0].Pos != want.Pos {
		t.Fatalf("quarantined %+v, want %+v", got, want)
	}

	p = openTest(t, dbPath(t), Options{})
	defer p.Close()
	_, err = p.Append(context.Background(), []cdc.Message{first, bad}, pos)
	if err == nil || !strings.Contains(err.Error(), want.String()) {
		t.Fatalf("under fail: %v, want an error reading %q", err, want.String())
	}
}

// TestRejectsAreQuarantinedInInputOrder: undecodable input (a request's
// Rejects, each placed by its Index) and protocol violations among its
// messages are quarantined in the order they came, also when the request
// is committed in parts because a message released more than a batch's
// output bound.
func TestRejectsAreQuarantinedInInputOrder(t *testing.T) {
	// The input, line by line: a reject is a nil message.
	progress := cdc.NewProgress(0, 5, cdc.Count{Time: 0, Count: 1}, cdc.Count{Time: 1, Count: 1},
		cdc.Count{Time: 2, Count: 1}, cdc.Count{Time: 3, Count: 1}, cdc.Count{Time: 4, Count: 1})
	in := []*cdc.Message{
		nil,
		ptr(cdc.NewUpdate([]byte(`"a"`), 0, 1)),
		ptr(cdc.NewUpdate([]byte(`"a"`), 0, 2)), // conflicting diff
		nil,
		ptr(cdc.NewUpdate([]byte(`"b"`), 1, 1)),
		ptr(cdc.NewUpdate([]byte(`"c"`), 2, 1)),
		ptr(cdc.NewUpdate([]byte(`"d"`), 3, 1)),
		ptr(cdc.NewUpdate([]byte(`"e"`), 4, 1)),
		&progress, // releases 6 records: more than the bound of 2
		nil,
		ptr(cdc.NewUpdate([]byte(`"f"`), 5, 1)),
		ptr(cdc.NewUpdate([]byte(`"e"`), 4, -1)), // below the frontier: stale, not a violation
		ptr(cdc.NewProgress(5, 6)),               // count 0 for time 5, which holds one
		nil,
		nil,
	}
	var req Request
	for i, m := range in {
		pos := cdc.Pos{Source: "in", Line: int64(i + 1), Offset: int64(10 * i)}
		if m == nil {
			req.Rejects = append(req.Rejects, cdc.Reject{Pos: pos, Raw: []byte("junk"), Reason: "malformed", Index: len(req.Msgs)})
			continue
		}
		req.Msgs, req.Pos = append(req.Msgs, *m), append(req.Pos, pos)
	}
	path := dbPath(t)
	p := openTest(t, path, Options{OnError: cdc.Quarantine, BatchMessages: 1})
	w, err := p.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lines []int64
	if err := r.Quarantine(func(q *QuarantineRecord) error { lines = append(lines, q.Pos.Line); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []int64{1, 3, 4, 10, 13, 14, 15}
	if !slices.Equal(lines, want) || res.Rejected == nil || res.Rejected.Pos.Line != 1 {
		t.Fatalf("quarantined lines %v, first rejected %+v: want %v, the first line 1", lines, res.Rejected, want)
	}
}

func ptr[T any](v T) *T { return &v }
