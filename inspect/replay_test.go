package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

// records returns n output records: updates of time 0, numbered from 1.
func records(n int) []recovery.Record {
	out := make([]recovery.Record, n)
	for i := range out {
		out[i] = recovery.Record{Seq: uint64(i + 1), Msg: cdc.NewUpdate([]byte(fmt.Sprintf(`"r%d"`, i+1)), 0, 1)}
	}
	return out
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReplayWritesTheRecordsFromASeqAndCountsThem(t *testing.T) {
	v := &fakeView{records: records(ProgressEvery + 10)}
	tests := []struct {
		name      string
		from      uint64
		wantFirst string
		wantN     int64
		wantCalls int
	}{
		{"from the start", 0, `"r1"`, ProgressEvery + 10, 3},   // before, at ProgressEvery, at the end
		{"from record 12", 12, `"r12"`, ProgressEvery - 1, 2},  // before, at the end
		{"past the end", ProgressEvery + 12, "", 0, 2},         // before, at the end
		{"from the last", ProgressEvery + 10, `"r4106"`, 1, 2}, // the last record alone
	}
	for _, tt := range tests {
		var b bytes.Buffer
		var calls int
		var last, total int64
		o := StreamOptions{Format: cdc.JSONL, Progress: func(n, tot int64) { calls, last, total = calls+1, n, tot }}
		if err := Replay(&b, v, tt.from, o); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if tt.wantN == 0 {
			lines = nil
		}
		if int64(len(lines)) != tt.wantN || last != tt.wantN || total != max(tt.wantN, 0) || calls != tt.wantCalls ||
			(tt.wantN > 0 && !strings.Contains(lines[0], tt.wantFirst)) {
			t.Errorf("%s: %d lines (first %q), progress %d of %d in %d calls; want %d from %s in %d calls",
				tt.name, len(lines), lines, last, total, calls, tt.wantN, tt.wantFirst, tt.wantCalls)
		}
	}
}

func TestReplayWarnsWhenNothingIsLeftToReplay(t *testing.T) {
	var log bytes.Buffer
	o := StreamOptions{Log: slog.New(slog.NewTextHandler(&log, nil))}
	if err := Replay(&bytes.Buffer{}, &fakeView{records: records(3)}, 9, o); err != nil || !strings.Contains(log.String(), "nothing to replay") {
		t.Fatalf("%v, log %q", err, log.String())
	}
}

func TestReplayTellsAWriteErrorFromAReadErrorAndAGoneProcessFromBoth(t *testing.T) {
	gone := fmt.Errorf("records: %w", control.ErrGone)
	tests := []struct {
		name string
		v    *fakeView
		w    func() *bytes.Buffer
		want string
		gone bool
	}{
		{"gone before the first record", &fakeView{err: gone}, nil, "", true},
		{"gone after one", &fakeView{records: records(1), err: gone}, nil, "read output log: records: the running cdclog stopped answering", false},
		{"a read error", &fakeView{err: errors.New("bad page")}, nil, "read output log: bad page", false},
	}
	for _, tt := range tests {
		err := Replay(&bytes.Buffer{}, tt.v, 1, StreamOptions{})
		if errors.Is(err, ErrGone) != tt.gone || (!tt.gone && (err == nil || err.Error() != tt.want)) {
			t.Errorf("%s: %v, want %q (gone %v)", tt.name, err, tt.want, tt.gone)
		}
	}
	err := Replay(failingWriter{}, &fakeView{records: records(1)}, 1, StreamOptions{})
	if err == nil || err.Error() != "write output: disk full" {
		t.Errorf("a write error: %v", err)
	}
}

// storedDB returns a database's reader, its stream ingested: three output
// records.
func storedDB(t *testing.T) *recovery.Reader {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	p, err := recovery.Open(path, recovery.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []cdc.Message{
		cdc.NewUpdate([]byte(`"b"`), 1, 1),
		cdc.NewProgress(1, 2, cdc.Count{Time: 1, Count: 1}),
		cdc.NewUpdate([]byte(`{"id":7}`), 0, -1),
		cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}),
	}
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := recovery.OpenReader(path, store.NoWait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRederiveAndVerifyStoredAgreeWithTheStoredOutput(t *testing.T) {
	r := storedDB(t)
	var stored, derived, report bytes.Buffer
	if err := Replay(&stored, r, 1, StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := Rederive(&derived, r, StreamOptions{Progress: func(_, tot int64) { total = tot }}); err != nil {
		t.Fatal(err)
	}
	if derived.String() != stored.String() || strings.Count(stored.String(), "\n") != 3 || total != 3 {
		t.Fatalf("re-derived (total %d)\n%s, stored\n%s", total, derived.String(), stored.String())
	}
	res, err := VerifyStored(&report, r)
	if err != nil || !res.Match || report.String() != "verified 3 records: identical\n" {
		t.Fatalf("verify: %+v, %v, %q", res, err, report.String())
	}
	if err := Rederive(failingWriter{}, r, StreamOptions{}); err == nil || err.Error() != "write output: disk full" {
		t.Fatalf("rederive into a failing writer: %v", err)
	}
}
