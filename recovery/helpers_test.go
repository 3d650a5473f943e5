package recovery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// quietLogger keeps test output readable.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// cleanStream builds a consolidated stream over times [from, to): a few
// keys per time and one progress statement per time.
func cleanStream(seed uint64, from, to uint64) []cdc.Message {
	rng := rand.New(rand.NewPCG(seed, 7))
	var msgs []cdc.Message
	for t := from; t < to; t++ {
		var n uint64
		for k := 0; k < 4; k++ {
			if rng.IntN(3) == 0 {
				msgs = append(msgs, cdc.NewUpdate([]byte(fmt.Sprintf(`"key-%d"`, k)), t, int64(rng.IntN(5)-2)|1))
				n++
			}
		}
		if n > 0 {
			msgs = append(msgs, cdc.NewProgress(t, t+1, cdc.Count{Time: t, Count: n}))
		} else {
			msgs = append(msgs, cdc.NewProgress(t, t+1))
		}
	}
	return msgs
}

// mangled duplicates and reorders msgs within a window, deterministically.
func mangled(seed uint64, msgs []cdc.Message) []cdc.Message {
	rng := rand.New(rand.NewPCG(seed, 9))
	var out []cdc.Message
	for _, m := range msgs {
		for c := 1 + rng.IntN(4)/3; c > 0; c-- {
			out = append(out, m)
		}
	}
	for i := range out {
		j := min(len(out)-1, i+rng.IntN(16))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// inMemory runs msgs through a plain receiver: the expected clean output.
func inMemory(t testing.TB, msgs []cdc.Message) []byte {
	r := demangle.New(0)
	var out []cdc.Message
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	var b []byte
	for i := range out {
		b = append(cdc.AppendJSON(b, &out[i]), '\n')
	}
	return b
}

func openTest(t testing.TB, path string, o Options) *Processor {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	p, err := Open(path, o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return p
}

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "state.db") }

// appendAll appends msgs in requests of n messages.
func appendAll(t testing.TB, p *Processor, msgs []cdc.Message, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(msgs); i += n {
		if _, err := p.Append(ctx, msgs[i:min(len(msgs), i+n)], nil); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
}

// storedOutput renders every committed output record as JSON Lines.
func storedOutput(t testing.TB, path string) []byte {
	t.Helper()
	return recordsFrom(t, path, 1)
}

// recordsFrom renders the stored records from seq from on.
func recordsFrom(t testing.TB, path string, from uint64) []byte {
	t.Helper()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b []byte
	if err := r.Records(from, func(rec *Record) error { b = append(cdc.AppendJSON(b, &rec.Msg), '\n'); return nil }); err != nil {
		t.Fatal(err)
	}
	return b
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
