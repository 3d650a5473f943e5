package input

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// readFileSource opens path, starts it at cursor and reads it to its end,
// returning the times read, the last cursor and the error that ended it.
func readFileSource(t *testing.T, path string, cursor []byte, policy cdc.ErrorPolicy) ([]uint64, []byte, error) {
	t.Helper()
	f, err := OpenFile(path, FileOptions{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Start(context.Background(), cursor); err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	b.Max, b.Policy = 7, policy
	var times []uint64
	var last []byte
	for {
		b.Reset()
		err := f.Read(context.Background(), b)
		for _, m := range b.Msgs {
			times = append(times, m.Update.Time)
		}
		if b.Cursor != nil {
			last = b.Cursor
		}
		if err != nil {
			return times, last, err
		}
	}
}

func TestAFileResumesAtItsCursorWhileItHoldsTheSameBytes(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", updates(0, 50))
	got, cursor, err := readFileSource(t, path, nil, cdc.Fail)
	if err != io.EOF || !slices.Equal(got, seq(0, 50)) {
		t.Fatalf("first read: %v, %v", got, err)
	}
	appendFile(t, path, updates(50, 60))
	if got, _, err := readFileSource(t, path, cursor, cdc.Fail); err != io.EOF || !slices.Equal(got, seq(50, 60)) {
		t.Fatalf("resumed after growth: %v, %v", got, err)
	}
	// Another file under the name: read from its start.
	writeFile(t, dir, "in.jsonl", updates(100, 160))
	if got, _, err := readFileSource(t, path, cursor, cdc.Fail); err != io.EOF || !slices.Equal(got, seq(100, 160)) {
		t.Fatalf("replaced: %v, %v", got, err)
	}
	// The same file with a byte before the offset changed.
	writeFile(t, dir, "in.jsonl", updates(0, 50))
	_, cursor, _ = readFileSource(t, path, nil, cdc.Fail)
	b, _ := os.ReadFile(path)
	b[len(b)-20] = '9'
	os.WriteFile(path, b, 0o644)
	if got, _, _ := readFileSource(t, path, cursor, cdc.Skip); len(got) < 49 {
		t.Fatalf("edited before the offset: resumed, read only %v", got)
	}
}

func TestAFileLeavesAnUnfinishedLastLineForLater(t *testing.T) {
	for _, policy := range []cdc.ErrorPolicy{cdc.Fail, cdc.Skip, cdc.Quarantine} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			whole := updates(0, 10)
			last := update(10)
			path := writeFile(t, dir, "in.jsonl", whole+last[:20])
			got, cursor, err := readFileSource(t, path, nil, policy)
			if err != io.EOF || !slices.Equal(got, seq(0, 10)) {
				t.Fatalf("%v, %v", got, err)
			}
			appendFile(t, path, last[20:]+update(11))
			if got, _, err := readFileSource(t, path, cursor, policy); err != io.EOF || !slices.Equal(got, seq(10, 12)) {
				t.Fatalf("once complete: %v, %v", got, err)
			}
		})
	}
}

func TestAFileEndsAtAWholeLastLineWithoutItsLineEnd(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.jsonl", updates(0, 3)+update(3)[:len(update(3))-1])
	if got, _, err := readFileSource(t, path, nil, cdc.Fail); err != io.EOF || !slices.Equal(got, seq(0, 4)) {
		t.Fatalf("%v, %v", got, err)
	}
}

// A last line without its line end that is a whole JSON object, but not
// a valid message, is no message being written: it is reported, as
// demangle and a pipe report it, not left unread with exit 0.
func TestAFileReportsAWrongLastLineWithoutItsLineEnd(t *testing.T) {
	for _, last := range []string{`{"update":{"data":"k","time":3,"diff":0}}`, `{"upsert":{}}`, `{"update":{"data":"k","time":3,"diff":1}}}`} {
		path := writeFile(t, t.TempDir(), "in.jsonl", updates(0, 3)+last)
		got, _, err := readFileSource(t, path, nil, cdc.Fail)
		var de *cdc.DecodeError
		if !errors.As(err, &de) || de.Pos.Line != 4 || !slices.Equal(got, seq(0, 3)) {
			t.Errorf("%s: read %v, then %v; want line 4 reported", last, got, err)
		}
	}
}

// A run that ended at a whole last line without its line end counted that
// line; the rerun, once the line end and more lines are written, must not
// count the line end as a line of its own, or every position it names
// (errors, violations, quarantined messages) is one line too far.
func TestAFileResumedAfterAWholeLastLineWithoutItsLineEndCountsLinesRight(t *testing.T) {
	dir := t.TempDir()
	for _, end := range []string{"", "\r"} {
		path := writeFile(t, dir, "in.jsonl", updates(0, 3)+strings.TrimSuffix(update(3), "\n")+end)
		got, cursor, err := readFileSource(t, path, nil, cdc.Fail)
		if err != io.EOF || !slices.Equal(got, seq(0, 4)) {
			t.Fatalf("first read: %v, %v", got, err)
		}
		appendFile(t, path, "\n"+update(4)+"{bad}\n") // {bad} is line 6
		got, _, err = readFileSource(t, path, cursor, cdc.Fail)
		var de *cdc.DecodeError
		if !errors.As(err, &de) || !slices.Equal(got, seq(4, 5)) {
			t.Fatalf("resumed: %v, %v", got, err)
		}
		if de.Pos.Line != 6 {
			t.Errorf("line end %q: the bad line 6 is reported as line %d", end, de.Pos.Line)
		}
	}
}

func TestAFileStopsBeforeABadLineUnderFail(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", updates(0, 5)+"{bad}\n"+updates(5, 8))
	got, cursor, err := readFileSource(t, path, nil, cdc.Fail)
	var de *cdc.DecodeError
	if !errors.As(err, &de) || de.Pos.Line != 6 || !slices.Equal(got, seq(0, 5)) {
		t.Fatalf("%v, %v", got, err)
	}
	// Corrected in place, the rerun reads the line.
	writeFile(t, dir, "in.jsonl", updates(0, 5)+update(99)+updates(5, 8))
	if got, _, err := readFileSource(t, path, cursor, cdc.Fail); err != io.EOF || !slices.Equal(got, append([]uint64{99}, seq(5, 8)...)) {
		t.Fatalf("after the fix: %v, %v", got, err)
	}
}

func TestOpenTellsFilesFromStreams(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", updates(0, 1))
	if s, err := Open(path, FileOptions{}); err != nil {
		t.Fatal(err)
	} else if _, ok := s.(*File); !ok {
		t.Fatalf("a regular file gave %T", s)
	} else {
		s.Close()
	}
	if _, err := Open(dir, FileOptions{}); err == nil {
		t.Fatal("a directory was opened")
	}
	if _, err := Open(dir+"/missing", FileOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
	if s, err := Open("/dev/null", FileOptions{}); err != nil {
		t.Fatal(err)
	} else if _, ok := s.(*Stream); !ok || s.Name() != "" {
		t.Fatalf("/dev/null gave %T named %q", s, s.Name())
	} else {
		s.Close()
	}
	if _, err := Open("/dev/null", FileOptions{Follow: true}); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("following /dev/null: %v", err)
	}
}

// followed opens path to follow it, started at cursor.
func followed(t *testing.T, path string, cursor []byte) *File {
	t.Helper()
	f, err := OpenFile(path, FileOptions{Follow: true, Poll: time.Millisecond, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Start(context.Background(), cursor); err != nil {
		t.Fatal(err)
	}
	return f
}

// collect reads f until it has n messages, failing after d.
func collect(t *testing.T, f recovery.Source, n int, d time.Duration) ([]uint64, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var times []uint64
	var cursor []byte
	b := newBatch()
	for len(times) < n {
		b.Reset()
		if err := f.Read(ctx, b); err != nil {
			t.Fatalf("after %d of %d messages: %v", len(times), n, err)
		}
		for _, m := range b.Msgs {
			times = append(times, m.Update.Time)
		}
		if b.Cursor != nil {
			cursor = b.Cursor
		}
	}
	return times, cursor
}

func TestAFollowedFileIsReadAsItGrows(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.jsonl", updates(0, 5))
	f := followed(t, path, nil)
	if got, _ := collect(t, f, 5, 10*time.Second); !slices.Equal(got, seq(0, 5)) {
		t.Fatal(got)
	}
	// A line written in two parts is read once whole.
	last := update(5)
	appendFile(t, path, last[:10])
	time.Sleep(20 * time.Millisecond)
	appendFile(t, path, last[10:]+updates(6, 8))
	if got, _ := collect(t, f, 3, 10*time.Second); !slices.Equal(got, seq(5, 8)) {
		t.Fatal(got)
	}
}

func TestAFollowedFileGoesOnAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", updates(0, 5))
	f := followed(t, path, nil)
	collect(t, f, 5, 10*time.Second)
	// The producer writes its last lines, and the file is rotated.
	appendFile(t, path, updates(5, 7))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "in.jsonl", updates(7, 10))
	got, cursor := collect(t, f, 5, 10*time.Second)
	if !slices.Equal(got, seq(5, 10)) {
		t.Fatal(got)
	}
	// The cursor describes the new file: a rerun resumes in it.
	appendFile(t, path, updates(10, 12))
	g := followed(t, path, cursor)
	if got, _ := collect(t, g, 2, 10*time.Second); !slices.Equal(got, seq(10, 12)) {
		t.Fatal(got)
	}
}

func TestAFollowedFileCutShortIsReadAgainFromItsStart(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.jsonl", updates(0, 20))
	f := followed(t, path, nil)
	collect(t, f, 20, 10*time.Second)
	// copytruncate: the file is emptied in place, then written again.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, updates(30, 33))
	if got, _ := collect(t, f, 3, 10*time.Second); !slices.Equal(got, seq(30, 33)) {
		t.Fatal(got)
	}
}

// A file cut and written again past what was read, between two polls, is
// not shorter than what was read; its last bytes read have changed, and
// it is read again from its start too (not from the middle of the new
// content).
func TestAFollowedFileRewrittenPastWhatWasReadIsReadAgainFromItsStart(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.jsonl", updates(0, 20))
	f := followed(t, path, nil)
	collect(t, f, 20, 10*time.Second)
	if err := os.WriteFile(path, []byte(updates(30, 60)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := collect(t, f, 30, 10*time.Second); !slices.Equal(got, seq(30, 60)) {
		t.Fatal(got)
	}
	// Reading on from there, the new content's end is not a rewrite.
	appendFile(t, path, updates(60, 62))
	if got, _ := collect(t, f, 2, 10*time.Second); !slices.Equal(got, seq(60, 62)) {
		t.Fatal(got)
	}
}

func TestAFollowedFileStopsWhenItsContextEnds(t *testing.T) {
	path := writeFile(t, t.TempDir(), "in.jsonl", "")
	f := followed(t, path, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	b := newBatch()
	if err := f.Read(ctx, b); !errors.Is(err, context.DeadlineExceeded) || b.Len() != 0 {
		t.Fatalf("%d messages, %v", b.Len(), err)
	}
}

func TestAResumedFileLogsALineOnlyForJSONLines(t *testing.T) {
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		t.Run(f.Name(), func(t *testing.T) {
			var content strings.Builder
			w := cdc.NewWriter(&content, f)
			r := cdc.NewReader(strings.NewReader(updates(0, 20)), cdc.JSONL, "")
			for {
				var m cdc.Message
				if err := r.Next(&m); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if err := w.Write(&m); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			path := writeFile(t, t.TempDir(), "in", content.String())
			var logged bytes.Buffer
			open := func() *File {
				src, err := OpenFile(path, FileOptions{Format: f, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { src.Close() })
				return src
			}
			src := open()
			src.Start(context.Background(), nil)
			b := newBatch()
			b.Max = 7
			if err := src.Read(context.Background(), b); err != nil || b.Cursor == nil {
				t.Fatalf("first read: %v, cursor %q", err, b.Cursor)
			}
			if err := open().Start(context.Background(), b.Cursor); err != nil {
				t.Fatal(err)
			}
			log := logged.String()
			if !strings.Contains(log, "resuming input") || strings.Contains(log, "line=") != (f == cdc.JSONL) {
				t.Errorf("%s resume logged %q: want a line number only for JSON Lines", f.Name(), log)
			}
		})
	}
}

// openFDs counts the process's open file descriptors, or skips t where
// /proc/self/fd cannot tell.
func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// ingest --db S FILE... opens every FILE before it starts, to refuse a
// missing one first; a list longer than the limit on open files (1024 by
// default) must not fail with "too many open files".
func TestFilesNotFollowedHoldNoDescriptorUntilStarted(t *testing.T) {
	dir := t.TempDir()
	const n = 64
	var files []*File
	before := openFDs(t)
	for i := range n {
		path := writeFile(t, dir, fmt.Sprintf("in%02d.jsonl", i), update(i))
		f, err := OpenFile(path, FileOptions{Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if open := openFDs(t) - before; open > 2 {
		t.Fatalf("%d files opened and not started hold %d descriptors", n, open)
	}
	var got []uint64
	for _, f := range files {
		if err := f.Start(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		b := newBatch()
		b.Max = 10
		if err := f.Read(context.Background(), b); err != io.EOF {
			t.Fatalf("read %s: %v", f.Label(), err)
		}
		for _, m := range b.Msgs {
			got = append(got, m.Update.Time)
		}
		f.Close()
	}
	if !slices.Equal(got, seq(0, n)) {
		t.Fatalf("read %v", got)
	}
	if open := openFDs(t) - before; open > 2 {
		t.Fatalf("%d descriptors left open", open)
	}
}

// --follow of a path with no file yet waits for it, like tail -F, saying
// so once, and reads it from its start once it appears; without --follow
// a missing file is an error.
func TestAFollowedFileThatDoesNotExistYetIsWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(dir string) string
	}{
		{"in an existing directory", func(dir string) string { return dir + "/in.jsonl" }},
		{"in a directory not made yet", func(dir string) string { return dir + "/later/in.jsonl" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t.TempDir())
			if _, err := OpenFile(path, FileOptions{Logger: quietLog()}); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("not followed: %v, want it missing", err)
			}
			var logged bytes.Buffer
			f, err := OpenFile(path, FileOptions{Follow: true, Poll: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Start(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if f.Size() != -1 || f.Offset() != 0 {
				t.Errorf("size %d, offset %d before the file exists", f.Size(), f.Offset())
			}
			for range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				b := newBatch()
				err := f.Read(ctx, b)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || b.Len() != 0 {
					t.Fatalf("before it exists: %d messages, %v", b.Len(), err)
				}
			}
			if n := strings.Count(logged.String(), "waiting for it to appear"); n != 1 {
				t.Errorf("the wait was logged %d times, want once:\n%s", n, logged.String())
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Dir(path), "in.jsonl", updates(0, 5))
			if got, _ := collect(t, f, 5, 10*time.Second); !slices.Equal(got, seq(0, 5)) {
				t.Fatal(got)
			}
			appendFile(t, path, updates(5, 7))
			if got, _ := collect(t, f, 2, 10*time.Second); !slices.Equal(got, seq(5, 7)) {
				t.Fatal(got)
			}
		})
	}
}

// A cursor committed for a followed file that is gone (rotated away, not
// yet recreated) is kept until a file appears: the same file back at the
// path resumes where it stopped, another is read from its start.
func TestAFollowedFileThatAppearsLaterResumesAtItsCursor(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", updates(0, 5))
	f := followed(t, path, nil)
	_, cursor := collect(t, f, 5, 10*time.Second)
	f.Close()
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	g, err := OpenFile(path, FileOptions{Follow: true, Poll: time.Millisecond, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background(), cursor); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path+".away", updates(5, 7))
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if got, _ := collect(t, g, 2, 10*time.Second); !slices.Equal(got, seq(5, 7)) {
		t.Fatalf("the same file back: read %v, want it resumed at 5", got)
	}
}
