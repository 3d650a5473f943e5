package recovery

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// Data that msgpack cannot carry exactly (0.10000000000000000001 would be
// written as 0.1, the same data as the update before it) is refused on
// input when the output file is msgpack: accepted, its release could not
// be written. Under Fail the call stops there, with what came before
// committed; under Quarantine it is set aside with the reason.
func TestMsgpackOutputRefusesDataItCannotCarryExactly(t *testing.T) {
	msgs := []cdc.Message{
		cdc.NewUpdate([]byte(`0.1`), 1, 1),
		cdc.NewUpdate([]byte(`0.10000000000000000001`), 1, 1),
		cdc.NewProgress(0, 2, cdc.Count{Time: 1, Count: 1}),
	}
	t.Run("fail", func(t *testing.T) {
		sink := &simSink{}
		p := openTest(t, dbPath(t), Options{Sink: sink, SinkName: "out.mp", SinkFormat: cdc.Msgpack})
		res, err := p.Append(t.Context(), msgs, nil)
		if !errors.Is(err, cdc.ErrMsgpackInexact) || res.Applied != 1 || res.Accepted != 1 {
			t.Fatalf("Append: %+v, %v; want ErrMsgpackInexact after 1 message", res, err)
		}
		if !strings.Contains(err.Error(), "0.10000000000000000001") {
			t.Errorf("error %q does not name the data", err)
		}
		if _, err := p.Append(t.Context(), msgs[2:], nil); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		want := cdc.NewUpdate([]byte(`0.1`), 1, 1)
		if got := decodeAll(t, sink.bytes(), cdc.Msgpack); len(got) != 2 || got[0].String() != want.String() {
			t.Errorf("output %v, want the first update and a progress statement", got)
		}
	})
	t.Run("quarantine", func(t *testing.T) {
		path := dbPath(t)
		p := openTest(t, path, Options{Sink: &simSink{}, SinkName: "out.mp", SinkFormat: cdc.Msgpack, OnError: cdc.Quarantine})
		res, err := p.Append(t.Context(), msgs, []cdc.Pos{{Source: "in", Line: 1}, {Source: "in", Line: 2}, {Source: "in", Line: 3}})
		if err != nil || res.Quarantined != 1 || res.Accepted != 2 {
			t.Fatalf("Append: %+v, %v", res, err)
		}
		p.Close()
		r, err := OpenReader(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var reasons []string
		r.Quarantine(func(q *QuarantineRecord) error { reasons = append(reasons, q.Pos.String()+" "+q.Reason); return nil })
		if len(reasons) != 1 || !strings.Contains(reasons[0], "in:2 ") || !strings.Contains(reasons[0], cdc.ErrMsgpackInexact.Error()) {
			t.Errorf("quarantine %q", reasons)
		}
	})
	t.Run("JSON Lines output takes it", func(t *testing.T) {
		sink := &simSink{}
		p := openTest(t, dbPath(t), Options{Sink: sink, SinkName: "out.jsonl"})
		if _, err := p.Append(t.Context(), append(msgs[:2:2], cdc.NewProgress(0, 2, cdc.Count{Time: 1, Count: 2})), nil); err != nil {
			t.Fatal(err)
		}
		p.Close()
		if !strings.Contains(string(sink.bytes()), `"data":0.10000000000000000001,`) {
			t.Errorf("output %s", sink.bytes())
		}
	})
}

// A msgpack output file attached to a database whose committed output
// holds such data (written when the output was JSON Lines) is refused at
// Open, naming the record, rather than written wrong.
func TestMsgpackOutputFileRefusesCommittedDataItCannotCarry(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	if _, err := p.Append(t.Context(), []cdc.Message{cdc.NewUpdate([]byte(`1e400`), 0, 1), cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1})}, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if got := string(storedOutput(t, path)); !strings.Contains(got, `{"data":1e400,`) {
		t.Fatalf("the stored output does not keep 1e400 exactly:\n%s", got)
	}
	_, err := Open(path, Options{Sink: &simSink{}, SinkName: "out.mp", SinkFormat: cdc.Msgpack, Logger: quietLogger()})
	if !errors.Is(err, cdc.ErrMsgpackInexact) || !strings.Contains(err.Error(), "output record 1") {
		t.Fatalf("Open: %v, want ErrMsgpackInexact naming output record 1", err)
	}
}

func decodeAll(t *testing.T, b []byte, f cdc.Format) []cdc.Message {
	t.Helper()
	r := cdc.NewReader(bytesReader(b), f, "out")
	var out []cdc.Message
	for {
		var m cdc.Message
		if err := r.Next(&m); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return out
		}
		out = append(out, m)
	}
}

// The WAL keeps data exactly, msgpack or not: an update with such a number
// still pending at a restart comes back from the WAL unchanged.
func TestWALKeepsDataMsgpackCannotCarry(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	pendingData := []cdc.Message{
		cdc.NewUpdate([]byte(`0.10000000000000000001`), 1, 1),
		cdc.NewUpdate([]byte(`{"a":[7.0,-1e400]}`), 1, 1),
		cdc.NewUpdate([]byte(`0.1`), 1, 1),
	}
	if _, err := p.Append(t.Context(), pendingData, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = openTest(t, path, Options{})
	if _, err := p.Append(t.Context(), []cdc.Message{cdc.NewProgress(0, 2, cdc.Count{Time: 1, Count: 3})}, nil); err != nil {
		t.Fatal(err)
	}
	p.Close()
	want := `{"update":{"data":0.1,"time":1,"diff":1}}
{"update":{"data":0.10000000000000000001,"time":1,"diff":1}}
{"update":{"data":{"a":[7.0,-1e400]},"time":1,"diff":1}}
{"progress":{"lower":0,"upper":2,"counts":[{"time":1,"count":3}]}}
`
	if got := string(storedOutput(t, path)); got != want {
		t.Fatalf("after a restart the output is\n%s\nwant\n%s", got, want)
	}
}
