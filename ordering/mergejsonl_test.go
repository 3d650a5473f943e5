package ordering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cdclog/cdclog/cdc"
)

// idRec is a record with an id, for following it through a merge.
func idRec(at, seq int, id string) string {
	return fmt.Sprintf(`{"meta":{"created_at":%d,"sequence_number":"%d"},"id":%q}`, at, seq, id)
}

// mergeStrings runs MergeJSONL over shards given as text, named s0, s1...;
// it returns the output, the stats, the log and the error.
func mergeStrings(t *testing.T, opts MergeOptions, shards ...string) (string, MergeStats, string, error) {
	t.Helper()
	in := make([]Shard, len(shards))
	for i, s := range shards {
		in[i] = Shard{Name: fmt.Sprintf("s%d", i), R: strings.NewReader(s)}
	}
	var out, log bytes.Buffer
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(&log, nil))
	}
	st, err := MergeJSONL(context.Background(), in, &out, opts)
	return out.String(), st, log.String(), err
}

// rejectList is a RejectWriter that keeps what it is given.
type rejectList struct {
	got []cdc.Reject
	err error
}

func (l *rejectList) Write(r *cdc.Reject) error {
	if l.err != nil {
		return l.err
	}
	l.got = append(l.got, *r)
	return nil
}

func lines(recs ...string) string { return strings.Join(recs, "\n") + "\n" }

func TestMergeJSONLAppliesThePolicyToBadLines(t *testing.T) {
	a := lines(idRec(1, 1, "a1"), `not json`, idRec(3, 1, "a3"))
	b := lines(`{"meta":{}}`, idRec(2, 1, "b2"))
	good := lines(idRec(1, 1, "a1"), idRec(2, 1, "b2"), idRec(3, 1, "a3"))
	tests := []struct {
		policy      cdc.ErrorPolicy
		wantOut     string
		wantErr     string
		skipped     int64
		quarantined int64
	}{
		// Under fail, nothing is written: b's first line fails before b
		// has a record, so not even a1 could be released.
		{cdc.Fail, "", "s1:1: meta.created_at is missing (and so is dynamodb.ApproximateCreationDateTime)", 0, 0},
		{cdc.Skip, good, "", 2, 0},
		{cdc.Quarantine, good, "", 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			q := &rejectList{}
			opts := MergeOptions{OnError: tt.policy}
			if tt.policy == cdc.Quarantine {
				opts.Quarantine = q
			}
			out, st, log, err := mergeStrings(t, opts, a, b)
			if out != tt.wantOut {
				t.Errorf("output\n%s\nwant\n%s", out, tt.wantOut)
			}
			if tt.wantErr != "" {
				var le *LineError
				if !errors.As(err, &le) || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want the *LineError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Skipped != tt.skipped || st.Quarantined != tt.quarantined || st.Written != 3 || st.Shards != 2 {
				t.Errorf("stats %+v", st)
			}
			for _, want := range []string{"s0:2: record is not valid JSON", "s1:1: meta.created_at is missing"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
			if tt.policy != cdc.Quarantine {
				return
			}
			if len(q.got) != 2 {
				t.Fatalf("quarantined %d lines, want 2", len(q.got))
			}
			at := int64(len(idRec(1, 1, "a1")) + 1) // the second line of s0
			if r := q.got[1]; r.Pos != (cdc.Pos{Source: "s0", Line: 2, Offset: at}) || string(r.Raw) != "not json" || r.Truncated ||
				!strings.HasPrefix(r.Reason, "record is not valid JSON") {
				t.Errorf("reject %+v", r)
			}
		})
	}
}

func TestMergeJSONLQuarantinesTheHeadOfALineTooLong(t *testing.T) {
	long := `{"x":"` + strings.Repeat("y", MaxLineSize) + `"}`
	q := &rejectList{}
	out, st, _, err := mergeStrings(t, MergeOptions{OnError: cdc.Quarantine, Quarantine: q}, lines(long, idRec(1, 1, "a")))
	if err != nil || out != lines(idRec(1, 1, "a")) || st.Quarantined != 1 {
		t.Fatalf("out %q, stats %+v, err %v", out, st, err)
	}
	if r := q.got[0]; !r.Truncated || len(r.Raw) != tooLongPrefix || r.Pos.Line != 1 {
		t.Fatalf("reject at %v with %d bytes, truncated %v", r.Pos, len(r.Raw), r.Truncated)
	}
}

func TestMergeJSONLCapsDisorderReports(t *testing.T) {
	var b strings.Builder
	for i := range 15 {
		b.WriteString(idRec(100-i, 1, fmt.Sprint(i)) + "\n") // every record after the first is out of order
	}
	tests := []struct {
		reports   int
		logged    int
		further   bool
		wantFirst string
	}{
		{0, DefaultDisorderReports, true, "at=s0:2 key=99/1"},
		{3, 3, true, "at=s0:2 key=99/1"},
		{100, 14, false, "at=s0:2 key=99/1"},
		{-1, 0, false, ""},
	}
	for _, tt := range tests {
		out, st, log, err := mergeStrings(t, MergeOptions{DisorderReports: tt.reports}, b.String())
		if err != nil || out != b.String() {
			t.Fatalf("reports %d: err %v, output changed:\n%s", tt.reports, err, out)
		}
		if st.OutOfOrder != 14 {
			t.Errorf("reports %d: OutOfOrder %d, want 14", tt.reports, st.OutOfOrder)
		}
		if n := strings.Count(log, "out-of-order record, kept"); n != tt.logged {
			t.Errorf("reports %d: %d reports logged, want %d:\n%s", tt.reports, n, tt.logged, log)
		}
		if got := strings.Contains(log, "further out-of-order records of this shard are only counted"); got != tt.further {
			t.Errorf("reports %d: 'further' line logged %v, want %v", tt.reports, got, tt.further)
		}
		if !strings.Contains(log, tt.wantFirst) {
			t.Errorf("reports %d: log lacks %q:\n%s", tt.reports, tt.wantFirst, log)
		}
	}
}

func TestMergeJSONLReadErrorStopsWithThePosition(t *testing.T) {
	boom := errors.New("disk on fire")
	in := []Shard{
		{Name: "bad", R: io.MultiReader(strings.NewReader(lines(idRec(1, 1, "a"))+idRec(2, 1, "torn")), iotest.ErrReader(boom))},
		{Name: "good", R: strings.NewReader(lines(idRec(1, 2, "b"), idRec(5, 1, "c")))},
	}
	var out bytes.Buffer
	st, err := MergeJSONL(context.Background(), in, &out, MergeOptions{})
	var re *ReadError
	if !errors.As(err, &re) || re.Source != "bad" || re.Line != 1 || !errors.Is(err, boom) {
		t.Fatalf("error %v, want a *ReadError of bad after line 1", err)
	}
	if err.Error() != "reading bad after line 1: disk on fire" {
		t.Errorf("error reads %q", err)
	}
	// a is written; then bad is read again and fails, before b (which
	// could only follow a record of bad) is released.
	if want := lines(idRec(1, 1, "a")); out.String() != want || st.Written != 1 {
		t.Errorf("output %q (%d written), want %q", out.String(), st.Written, want)
	}
}

// failWriter fails every write.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestMergeJSONLWriteErrorsAreTyped(t *testing.T) {
	full := errors.New("no space left")
	in := []Shard{{Name: "a", R: strings.NewReader(lines(idRec(1, 1, "a")))}}
	_, err := MergeJSONL(context.Background(), in, failWriter{full}, MergeOptions{})
	var we *WriteError
	if !errors.As(err, &we) || we.Quarantine || !errors.Is(err, full) || err.Error() != "writing output: no space left" {
		t.Fatalf("output failure: %v, want an output *WriteError", err)
	}

	in = []Shard{{Name: "a", R: strings.NewReader(lines("bad", idRec(1, 1, "a")))}}
	var out bytes.Buffer
	st, err := MergeJSONL(context.Background(), in, &out, MergeOptions{OnError: cdc.Quarantine, Quarantine: &rejectList{err: full}})
	if !errors.As(err, &we) || !we.Quarantine || !errors.Is(err, full) {
		t.Fatalf("quarantine failure: %v, want a quarantine *WriteError", err)
	}
	if out.Len() != 0 || st.Quarantined != 0 {
		t.Fatalf("went on after the quarantine failed: %q, %+v", out.String(), st)
	}
}

func TestMergeJSONLQuarantineNeedsAWriter(t *testing.T) {
	_, err := MergeJSONL(context.Background(), nil, io.Discard, MergeOptions{OnError: cdc.Quarantine})
	if !errors.Is(err, ErrNoQuarantine) {
		t.Fatalf("error %v, want ErrNoQuarantine", err)
	}
}

func TestMergeJSONLStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	in := []Shard{{Name: "a", R: strings.NewReader(lines(idRec(1, 1, "a")))}}
	if _, err := MergeJSONL(ctx, in, &out, MergeOptions{}); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Fatalf("error %v, output %q; want context.Canceled and nothing written", err, out.String())
	}
}

func TestMergeJSONLReportsProgress(t *testing.T) {
	var b strings.Builder
	n := 2*ProgressEvery + 5
	for i := range n {
		b.WriteString(idRec(i, 1, "") + "\n")
	}
	var calls []int64
	_, st, _, err := mergeStrings(t, MergeOptions{Progress: func(w int64) { calls = append(calls, w) }}, b.String())
	if err != nil || st.Written != int64(n) {
		t.Fatalf("err %v, stats %+v", err, st)
	}
	if len(calls) != 2 || calls[0] != ProgressEvery || calls[1] != 2*ProgressEvery {
		t.Fatalf("progress calls %v, want [%d %d]", calls, ProgressEvery, 2*ProgressEvery)
	}
}

func TestMergeJSONLWithoutShardsWritesNothing(t *testing.T) {
	out, st, _, err := mergeStrings(t, MergeOptions{})
	if err != nil || out != "" || st != (MergeStats{}) {
		t.Fatalf("out %q, stats %+v, err %v", out, st, err)
	}
}
