package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// writeBigRelease writes a stream whose last statement releases n times at
// once: an update at each of n 20-digit times (40 bytes a count), the
// statements for all but the first, then the one for the first. Unsplit,
// the release's statement would be longer than cdc.MaxMessageSize.
func writeBigRelease(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const base = uint64(10_000_000_000_000_000_000)
	var b []byte
	for i := 0; i < n; i++ {
		b = strconv.AppendUint(append(b[:0], `{"update":{"data":"k","time":`...), base+uint64(i), 10)
		w.Write(append(b, `,"diff":1}}`+"\n"...))
	}
	for lo := 1; lo < n; lo += 1000 {
		hi := min(n, lo+1000)
		m := cdc.NewProgress(base+uint64(lo), base+uint64(hi))
		for i := lo; i < hi; i++ {
			m.Progress.Counts = append(m.Progress.Counts, cdc.Count{Time: base + uint64(i), Count: 1})
		}
		w.Write(append(cdc.AppendJSON(b[:0], &m), '\n'))
	}
	last := cdc.NewProgress(0, base+1, cdc.Count{Time: base, Count: 1})
	w.Write(append(cdc.AppendJSON(b[:0], &last), '\n'))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A release of 450,000 times at once is written as consecutive statements
// that cdclog reads back, and identically by the in-memory and the
// durable receiver, in both formats. It takes about 20 CPU-seconds, so it
// runs only with CDCLOG_LONG=1; demangle's
// TestAReleaseBeyondTheRealMessageLimitReadsBack covers the receiver and
// the codecs at the real limit in every run.
func TestALongReleaseIsWrittenSoThatCdclogReadsItBack(t *testing.T) {
	if testing.Short() || os.Getenv("CDCLOG_LONG") == "" {
		t.Skip("writes and reads a 45 MB stream four times; set CDCLOG_LONG=1 to run it")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeBigRelease(t, in, 450_000)
	for _, f := range []string{"jsonl", "msgpack"} {
		t.Run(f, func(t *testing.T) {
			clean := mustRunBin(t, nil, "--quiet", "--out-format", f, "demangle", in).Stdout
			out := filepath.Join(dir, "out."+f)
			mustRunBin(t, nil, "--quiet", "--out-format", f, "ingest", "--db", filepath.Join(dir, f+".db"), "--out", out, in)
			if !bytes.Equal(readFile(t, out), []byte(clean)) {
				t.Fatal("ingest's output differs from demangle's")
			}
			again := mustRunBin(t, nil, "--quiet", "--format", f, "demangle", out).Stdout
			if again != clean {
				t.Fatal("cdclog does not read its own clean output back to itself")
			}
		})
	}
}
