package main

// Helpers shared by the end-to-end tests (e2e_*_test.go, crash_*_test.go),
// which run the built cdclog binary (internal/testbin) as a child process.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
)

// streamSpec names a generated, mangled CDC stream.
type streamSpec struct {
	Seed  int64
	Times uint64
	Keys  int
}

// messages yields the mangled stream.
func (s streamSpec) messages() func(func(cdc.Message) bool) {
	gen := streamgen.Gen(streamgen.GenOptions{Seed: s.Seed, Times: s.Times, Keys: s.Keys})
	return streamgen.Mangle(gen, streamgen.MangleOptions{Seed: s.Seed + 1,
		MaxDelay: streamgen.DefaultMaxDelay, MaxCopies: streamgen.DefaultMaxCopies})
}

// writeTestStream writes the stream to path in format f and returns the number
// of messages.
func writeTestStream(t testing.TB, path string, f cdc.Format, s streamSpec) int {
	t.Helper()
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(file, 1<<20)
	w := cdc.NewWriter(bw, f)
	n := 0
	for m := range s.messages() {
		if err := w.Write(&m); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// inMemoryClean runs the stream through the in-memory receiver (cdclog
// demangle, in-process) and returns the clean stream in format f: what
// every durable run must end with.
func inMemoryClean(t testing.TB, path string, f cdc.Format) []byte {
	t.Helper()
	args := []string{"cdclog", "--quiet", "--in-format", "jsonl", "--out-format", f.String(), "demangle", path}
	var out, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &out, &stderr); code != 0 {
		t.Fatalf("demangle %s: exit %d: %s", path, code, stderr.String())
	}
	return out.Bytes()
}

// readFile returns the file's content, or nil when it does not exist.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b
}

// mustRunBin runs cdclog to completion and fails t unless it exits 0.
func mustRunBin(t testing.TB, stdin io.Reader, args ...string) testbin.Result {
	t.Helper()
	r := testbin.Run(t, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("cdclog %s: %v", strings.Join(args, " "), r)
	}
	return r
}

// expectFailure runs cdclog, expecting exit code code and stderr naming
// each of mentions.
func expectFailure(t testing.TB, code int, stdin io.Reader, args []string, mentions ...string) testbin.Result {
	t.Helper()
	r := testbin.Run(t, stdin, args...)
	if r.Code != code {
		t.Fatalf("cdclog %s: got %v, want exit %d", strings.Join(args, " "), r, code)
	}
	for _, m := range mentions {
		if !strings.Contains(r.Stderr, m) {
			t.Errorf("cdclog %s: stderr does not name %q:\n%s", strings.Join(args, " "), m, r.Stderr)
		}
	}
	noPanic(t, r)
	return r
}

// noPanic fails t if the child's stderr shows a Go panic or a runtime
// fatal error: every failure must be a clear error.
func noPanic(t testing.TB, r testbin.Result) {
	t.Helper()
	if strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "fatal error:") || strings.Contains(r.Stderr, "goroutine ") {
		t.Fatalf("cdclog crashed instead of reporting an error:\n%s", r.Stderr)
	}
}

// quietLogger keeps recovery's logs out of test output.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// dbStatus opens the database read-only and returns its status.
func dbStatus(t testing.TB, path string) recovery.Status {
	t.Helper()
	r, err := recovery.OpenReader(path, 0)
	if err != nil {
		t.Fatalf("open %s read-only: %v", path, err)
	}
	defer r.Close()
	s, err := r.Status()
	if err != nil {
		t.Fatalf("status of %s: %v", path, err)
	}
	return s
}

// storedOutput renders every committed output record in format f.
func storedOutput(t testing.TB, path string, f cdc.Format) []byte {
	t.Helper()
	r, err := recovery.OpenReader(path, 0)
	if err != nil {
		t.Fatalf("open %s read-only: %v", path, err)
	}
	defer r.Close()
	var b []byte
	err = r.Records(1, func(rec *recovery.Record) error {
		var err error
		b, err = cdc.AppendMessage(b, f, &rec.Msg)
		return err
	})
	if err != nil {
		t.Fatalf("read the output log of %s: %v", path, err)
	}
	return b
}

// quarantined returns the database's quarantine records.
func quarantined(t testing.TB, path string) []recovery.QuarantineRecord {
	t.Helper()
	r, err := recovery.OpenReader(path, 0)
	if err != nil {
		t.Fatalf("open %s read-only: %v", path, err)
	}
	defer r.Close()
	var recs []recovery.QuarantineRecord
	err = r.Quarantine(func(q *recovery.QuarantineRecord) error {
		c := *q
		c.Raw = append([]byte(nil), q.Raw...)
		recs = append(recs, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// logField returns the value of key in the last log line of stderr whose
// message is msg ("" when absent). The logs are slog's text format.
func logField(stderr, msg, key string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.Contains(l, "msg="+msg) && !strings.Contains(l, `msg="`+msg+`"`) {
			continue
		}
		re := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(key) + `=("(?:[^"\\]|\\.)*"|\S*)`)
		if m := re.FindStringSubmatch(l); m != nil {
			return strings.Trim(m[1], `"`)
		}
		return ""
	}
	return ""
}

// splitLines splits data into n files of about equal numbers of lines,
// named prefix.1, prefix.2, ...; their concatenation is data.
func splitLines(t testing.TB, data []byte, n int, prefix string) []string {
	t.Helper()
	lines := bytes.SplitAfter(data, []byte("\n"))
	var names []string
	per := (len(lines) + n - 1) / n
	for i := 0; i < n; i++ {
		part := lines[min(i*per, len(lines)):min((i+1)*per, len(lines))]
		name := prefix + "." + string(rune('1'+i))
		if err := os.WriteFile(name, bytes.Join(part, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

// abs returns path made absolute.
func abs(t testing.TB, path string) string {
	t.Helper()
	a, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// updateLines returns the update lines of a JSON Lines stream, in order.
func updateLines(b []byte) []string {
	var u []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, `{"update"`) {
			u = append(u, l)
		}
	}
	return u
}
