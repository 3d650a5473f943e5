package clean

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/streamgen"
)

// mangled returns a generated stream, duplicated and reordered, encoded in
// format f, and the number of its messages. With heldBack every progress
// statement comes after every update, so that the receiver holds the
// whole stream until the end.
func mangled(t testing.TB, times uint64, keys int, f cdc.Format, heldBack bool) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	w := cdc.NewWriter(&buf, f)
	var progress []cdc.Message
	n := 0
	gen := streamgen.Gen(streamgen.GenOptions{Times: times, Keys: keys, Final: true})
	for m := range streamgen.Mangle(gen, streamgen.MangleOptions{Seed: 7,
		MaxDelay: streamgen.DefaultMaxDelay, MaxCopies: streamgen.DefaultMaxCopies}) {
		n++
		if heldBack && m.Kind == cdc.KindProgress {
			progress = append(progress, m)
			continue
		}
		if err := w.Write(&m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range progress {
		if err := w.Write(&progress[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

// reference runs in through a bare receiver, one message at a time, and
// returns the encoded output: what Stream must write.
func reference(t *testing.T, in []byte, f cdc.Format) []byte {
	t.Helper()
	r := cdc.NewReader(bytes.NewReader(in), f, "in")
	recv := demangle.New(0)
	var buf bytes.Buffer
	w := cdc.NewWriter(&buf, f)
	for m, err := range r.All() {
		if err != nil {
			t.Fatalf("decode input: %v", err)
		}
		out, _, err := recv.Push(nil, &m, r.Pos())
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if err := w.Write(&out[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// run streams the text in (JSON Lines) with o and returns the output.
func run(t *testing.T, in string, o Options) (string, Result, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := Stream(context.Background(), cdc.NewReader(strings.NewReader(in), cdc.JSONL, "in"), cdc.NewWriter(&out, cdc.JSONL), o)
	return out.String(), res, err
}

// rejects collects what Stream quarantines.
type rejects []cdc.Reject

func (rs *rejects) Write(rj *cdc.Reject) error {
	*rs = append(*rs, *rj)
	return nil
}

// lines joins JSON Lines messages, each with its line end.
func lines(msgs ...string) string { return strings.Join(msgs, "\n") + "\n" }
