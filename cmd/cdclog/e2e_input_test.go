package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
)

// edgeStream is a small stream whose clean output is known: two updates
// at time 0 (one of them of data big bytes long, when big > 0), then the
// progress statement completing time 0.
func edgeStream(big int) (in, clean []byte) {
	data := `"a"`
	if big > 0 {
		data = `"` + strings.Repeat("x", big) + `"`
	}
	in = []byte(`{"update":{"data":` + data + `,"time":0,"diff":1}}` + "\n" +
		`{"update":{"data":{"k":1},"time":0,"diff":-2}}` + "\n" +
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":2}]}}` + "\n")
	return in, []byte(`{"update":{"data":` + data + `,"time":0,"diff":1}}` + "\n" +
		`{"update":{"data":{"k":1},"time":0,"diff":-2}}` + "\n" +
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":2}]}}` + "\n")
}

// ingestFile writes data to a file and runs cdclog with args followed by
// --db, --out and that file, on a new database.
func ingestFile(t *testing.T, data []byte, args ...string) (r testbin.Result, in, db, out string) {
	t.Helper()
	dir := t.TempDir()
	in = filepath.Join(dir, "in")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, out = filepath.Join(dir, "state.db"), filepath.Join(dir, "out")
	cmd := append(append([]string{}, args...), "--db", db, "--out", out, in)
	return testbin.Run(t, nil, cmd...), in, db, out
}

// TestIngestAcceptsTextEdgeCases: an empty file, a last line without a
// newline, CRLF line ends, a UTF-8 byte order mark, blank lines and a
// record of several megabytes are all accepted, with the clean output of
// the plain stream.
func TestIngestAcceptsTextEdgeCases(t *testing.T) {
	plain, want := edgeStream(0)
	for _, tc := range []struct {
		name string
		in   []byte
		want []byte
	}{
		{"empty file", nil, nil},
		{"no final newline", bytes.TrimSuffix(plain, []byte("\n")), want},
		{"CRLF", bytes.ReplaceAll(plain, []byte("\n"), []byte("\r\n")), want},
		{"byte order mark", append([]byte("\xef\xbb\xbf"), plain...), want},
		{"blank lines", bytes.ReplaceAll(plain, []byte("\n"), []byte("\n\n  \n")), want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, db, out := ingestFile(t, tc.in, "ingest")
			if r.Code != 0 {
				t.Fatalf("%v", r)
			}
			if got := readFile(t, out); !bytes.Equal(got, tc.want) {
				t.Fatalf("output %q, want %q", got, tc.want)
			}
			if s := dbStatus(t, db); s.OutputRecords != uint64(bytes.Count(tc.want, []byte("\n"))) {
				t.Fatalf("database holds %d output records", s.OutputRecords)
			}
		})
	}
	t.Run("a record of 5 MB", func(t *testing.T) {
		in, want := edgeStream(5 << 20)
		r, _, _, out := ingestFile(t, in, "ingest")
		if r.Code != 0 {
			t.Fatalf("%v", r)
		}
		if got := readFile(t, out); !bytes.Equal(got, want) {
			t.Fatalf("output of %d bytes, want %d", len(got), len(want))
		}
	})
}

// TestIngestRejectsBadBytesClearly: a line longer than cdc.MaxMessageSize
// and lines with NUL bytes are clear errors naming the line under
// --on-error fail (exit 1, no crash), and are skipped and counted under
// skip, with the clean output of the good lines.
func TestIngestRejectsBadBytesClearly(t *testing.T) {
	plain, want := edgeStream(0)
	lines := bytes.SplitAfter(plain, []byte("\n"))
	insert := func(bad string) []byte { // as line 2
		return bytes.Join([][]byte{lines[0], []byte(bad + "\n"), lines[1], lines[2]}, nil)
	}
	huge := `{"update":{"data":"` + strings.Repeat("y", cdc.MaxMessageSize) + `","time":0,"diff":5}}`
	for _, tc := range []struct {
		name   string
		bad    string
		reason string
	}{
		{"a line beyond the message size limit", huge, fmt.Sprintf("exceeds the %d MiB message limit", cdc.MaxMessageSize>>20)},
		{"a NUL byte between values", `{"update":{"data":"b",` + "\x00" + `"time":0,"diff":1}}`, "malformed JSON"},
		{"a NUL byte in a string", `{"update":{"data":"b` + "\x00" + `","time":0,"diff":1}}`, "malformed JSON"},
		{"only NUL bytes", "\x00\x00\x00\x00", "malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := insert(tc.bad)
			r, in, _, _ := ingestFile(t, data, "ingest")
			if r.Code != exitFailure || !strings.Contains(r.Stderr, in+":2") || !strings.Contains(r.Stderr, tc.reason) {
				t.Fatalf("%v\nwant exit 1 naming %s:2 and %q", r, in, tc.reason)
			}
			noPanic(t, r)
			r, _, db, out := ingestFile(t, data, "ingest", "--on-error", "skip")
			if r.Code != 0 {
				t.Fatalf("skip: %v", r)
			}
			if got := readFile(t, out); !bytes.Equal(got, want) {
				t.Fatalf("skip: output %.200q, want %q", got, want)
			}
			if s := dbStatus(t, db); s.Skipped != 1 {
				t.Fatalf("skip: %d skipped, want 1", s.Skipped)
			}
		})
	}
}

// TestIngestResumesATruncatedMsgpackFileOnceComplete: a msgpack file cut
// in the middle of a message (a producer still writing it) is ingested up
// to that message, which is left unread with a warning naming its offset
// (exit 0, under every --on-error); once the file is complete, the rerun
// resumes at that message and ends with the clean output of the whole
// stream.
func TestIngestResumesATruncatedMsgpackFileOnceComplete(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.mp")
	writeTestStream(t, full, cdc.Msgpack, streamSpec{Seed: 9, Times: 10_000})
	data := readFile(t, full)
	jsonl := reencode(t, data, cdc.Msgpack, cdc.JSONL)
	os.WriteFile(filepath.Join(dir, "full.jsonl"), jsonl, 0o644)
	want := inMemoryClean(t, filepath.Join(dir, "full.jsonl"), cdc.JSONL)

	// Cut in the middle of the message that starts past two thirds.
	r := cdc.NewReader(bytes.NewReader(data), cdc.Msgpack, "x")
	var m cdc.Message
	for r.Offset() < int64(len(data))*2/3 {
		if err := r.Next(&m); err != nil {
			t.Fatal(err)
		}
	}
	start := r.Offset()
	r.Next(&m)
	cut := start + (r.Offset()-start)/2
	in, db, out := filepath.Join(dir, "in.mp"), filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, data[:cut], 0o644)
	args := []string{"--in-format", "msgpack", "ingest", "--db", db, "--out", out, in}
	first := mustRunBin(t, nil, append(args, "--on-error", "quarantine")...)
	if !strings.Contains(first.Stderr, "left unread") || !strings.Contains(first.Stderr, fmt.Sprintf("offset=%d", start)) {
		t.Errorf("no warning about the unfinished message at %d:\n%s", start, first.Stderr)
	}
	if s := dbStatus(t, db); s.Quarantined != 0 {
		t.Errorf("the unfinished message was quarantined")
	}
	before := reencode(t, data[:start], cdc.Msgpack, cdc.JSONL)
	os.WriteFile(filepath.Join(dir, "before.jsonl"), before, 0o644)
	if got, wantBefore := readFile(t, out), inMemoryClean(t, filepath.Join(dir, "before.jsonl"), cdc.JSONL); !bytes.Equal(got, wantBefore) {
		t.Fatalf("committed output is not that of the complete messages: %s", firstDifference(got, wantBefore))
	}
	os.WriteFile(in, data, 0o644)
	res := mustRunBin(t, nil, args...)
	if !strings.Contains(res.Stderr, "resuming input") {
		t.Errorf("the rerun did not resume:\n%s", res.Stderr)
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("after the file was completed: %s", firstDifference(got, want))
	}
}

// TestDemangleHandlesEdgeCases: cdclog demangle accepts the same text edge
// cases and rejects an overlong line with a clear error.
func TestDemangleHandlesEdgeCases(t *testing.T) {
	plain, want := edgeStream(0)
	crlf := append([]byte("\xef\xbb\xbf"), bytes.TrimSuffix(bytes.ReplaceAll(plain, []byte("\n"), []byte("\r\n")), []byte("\r\n"))...)
	r := mustRunBin(t, bytes.NewReader(crlf), "demangle")
	if r.Stdout != string(want) {
		t.Fatalf("BOM, CRLF, no final newline: output %q, want %q", r.Stdout, want)
	}
	huge := append([]byte(`{"update":{"data":"`+strings.Repeat("y", cdc.MaxMessageSize)+`","time":0,"diff":5}}`+"\n"), plain...)
	expectFailure(t, exitFailure, bytes.NewReader(huge), []string{"demangle"}, "stdin:1", "message limit")
}
