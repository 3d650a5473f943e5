package cdc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderRejectKeepsTheHeadOfAnOverlongLine(t *testing.T) {
	long := `{"update":{"data":"` + strings.Repeat("x", 3*RejectHead) + `","time":1,"diff":1}}`
	for _, tc := range []struct {
		name string
		max  int
	}{
		{"line buffered whole", len(long) - 10},
		{"line discarded as it streams", 2 * RejectHead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := long + "\n" + `{"update":{"data":1,"time":1,"diff":1}` + "\n"
			r := NewReader(strings.NewReader(in), JSONL, "in")
			r.max = tc.max
			var m Message
			var de *DecodeError
			if err := r.Next(&m); !errors.As(err, &de) {
				t.Fatalf("Next = %v, want a DecodeError", err)
			}
			rj := r.Reject(de)
			if !rj.Truncated || !bytes.Equal(rj.Raw, []byte(long[:RejectHead])) {
				t.Fatalf("reject keeps %d bytes (truncated %v), want the first %d", len(rj.Raw), rj.Truncated, RejectHead)
			}
			if rj.Pos.Line != 1 || !strings.Contains(rj.Reason, "exceeds") {
				t.Fatalf("reject %s", rj.String())
			}
			// The next bad line is held whole: nothing of the long one stays.
			if err := r.Next(&m); !errors.As(err, &de) {
				t.Fatalf("second Next = %v, want a DecodeError", err)
			}
			if rj := r.Reject(de); rj.Truncated || string(rj.Raw) != `{"update":{"data":1,"time":1,"diff":1}` {
				t.Fatalf("second reject %q (truncated %v)", rj.Raw, rj.Truncated)
			}
		})
	}
}

type syncBuffer struct {
	bytes.Buffer
	synced bool
}

func (b *syncBuffer) Sync() error { b.synced = true; return nil }

func TestRejectWriterWritesOneLinePerRejectAndSyncsOnClose(t *testing.T) {
	var buf syncBuffer
	w := NewRejectWriter(&buf)
	rejects := []Reject{
		{Pos: Pos{Source: "a", Line: 2, Offset: 10}, Raw: []byte(`{"x"`), Reason: "bad JSON"},
		{Pos: Pos{Source: "b", Offset: 7}, Raw: []byte{0xff, 0x00}, Reason: "bad msgpack"},
		{Pos: Pos{Source: "c", Line: 9}, Raw: []byte("head"), Truncated: true, Reason: "too long"},
	}
	for i := range rejects {
		if err := w.Write(&rejects[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || !buf.synced {
		t.Fatalf("Close = %v, synced %v", err, buf.synced)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(rejects) || w.Count() != uint64(len(rejects)) {
		t.Fatalf("%d lines, count %d:\n%s", len(lines), w.Count(), buf.String())
	}
	for i, l := range lines {
		var got RejectLine
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		want := rejects[i]
		raw := []byte(got.Raw)
		if got.RawBase64 != nil {
			raw = got.RawBase64
		}
		if got.Source != want.Pos.Source || got.Line != want.Pos.Line || got.Offset != want.Pos.Offset ||
			got.Reason != want.Reason || !bytes.Equal(raw, want.Raw) || got.Truncated != want.Truncated {
			t.Errorf("line %d: %+v, want %+v", i, got, want)
		}
	}
	if !strings.Contains(lines[1], `"raw_base64"`) {
		t.Errorf("non-UTF-8 bytes not in base64: %s", lines[1])
	}
}

// TestTheRejectOfAnOverlongLineDoesNotDependOnTheReads: a line past the
// limit is rejected with its first RejectHead bytes (and, when those look
// like msgpack, the hint to read it so), whether it came in one read or a
// byte at a time. Byte-wise reads used to keep only the bytes buffered
// when the line passed the limit (FuzzReader, seed a6f114b73f8d1c5d).
func TestTheRejectOfAnOverlongLineDoesNotDependOnTheReads(t *testing.T) {
	mp := appendMsgpackOf(nil, &Message{Kind: KindUpdate, Update: Update{Data: []byte(`"` + strings.Repeat("x", 3000) + `"`), Time: 1, Diff: 1}})
	for _, line := range [][]byte{bytes.Repeat([]byte("y"), 3000), mp} {
		in := append(append([]byte{}, line...), "\n{\"finish\":{\"time\":2}}\n"...)
		var rejects []Reject
		for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader} {
			r := NewReader(wrap(bytes.NewReader(in)), JSONL, "in")
			r.max = 16
			var m Message
			err := r.Next(&m)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("an overlong line: %v", err)
			}
			rejects = append(rejects, r.Reject(de))
		}
		whole, bytewise := rejects[0], rejects[1]
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("one read: %q %q (%d bytes)\nbyte-wise: %q %q (%d bytes)", whole.Reason, whole.Raw[:20], len(whole.Raw), bytewise.Reason, bytewise.Raw[:min(20, len(bytewise.Raw))], len(bytewise.Raw))
		}
		if len(whole.Raw) != RejectHead || !whole.Truncated || !bytes.Equal(whole.Raw, line[:RejectHead]) {
			t.Fatalf("raw %d bytes (truncated %v), want the line's first %d", len(whole.Raw), whole.Truncated, RejectHead)
		}
	}
}
