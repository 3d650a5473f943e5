package recovery

import (
	"context"
	"testing"

	"github.com/cdclog/cdclog/cdc"
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
