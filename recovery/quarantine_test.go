package recovery

import (
	"bytes"
	"context"
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
