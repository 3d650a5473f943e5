package ordering

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// keptRejects is a RejectWriter that keeps what it is given.
type keptRejects []cdc.Reject

func (l *keptRejects) Write(rj *cdc.Reject) error {
	*l = append(*l, *rj)
	return nil
}

// cdcReject is the reject that cdc.Reader (ingest, demangle, serve) makes
// of line number line of input (merge's records are not CDC messages:
// cdc.Reader refuses every line, each for its own reason).
func cdcReject(t *testing.T, input, source string, line int64) cdc.Reject {
	t.Helper()
	rd := cdc.NewReader(strings.NewReader(input), cdc.JSONL, source)
	for {
		var m cdc.Message
		err := rd.Next(&m)
		var de *cdc.DecodeError
		switch {
		case errors.As(err, &de) && de.Pos.Line == line:
			return rd.Reject(de)
		case errors.As(err, &de):
		case err != nil:
			t.Fatalf("cdc.Reader: %v before line %d", err, line)
		}
	}
}

// A line over the message limit is one error, whichever command meets it:
// merge's rejects (the JSONLReader and MergeJSONL's chunked reader) give
// the reason, the truncation and the first KiB that cdc.Reader's do, so a
// quarantine file reads the same from merge as from demangle.
func TestAnOverlongLineIsRejectedInTheWordsOfEveryReader(t *testing.T) {
	over := longRecord(MaxLineSize + 1)
	input := rec1(1, 1) + "\n" + over + "\n" + rec1(2, 2) + "\n"
	want := cdcReject(t, input, "shard.jsonl", 2)
	if want.Reason != cdc.LineTooLong(2) || !want.Truncated || len(want.Raw) != cdc.RejectHead {
		t.Fatalf("cdc.Reader's reject: %q truncated %v with %d bytes", want.Reason, want.Truncated, len(want.Raw))
	}

	_, _, bad, err := readAll(t, strings.NewReader(input))
	if err != nil || len(bad) != 1 {
		t.Fatalf("JSONLReader: %d bad lines, %v; want 1", len(bad), err)
	}
	var merged keptRejects
	opts := MergeOptions{OnError: cdc.Quarantine, Quarantine: &merged, Log: slog.New(slog.DiscardHandler)}
	if _, err := MergeJSONL(context.Background(), []Shard{{Name: "shard.jsonl", R: strings.NewReader(input)}}, io.Discard, opts); err != nil || len(merged) != 1 {
		t.Fatalf("MergeJSONL: %d rejects, %v; want 1", len(merged), err)
	}

	for name, got := range map[string]cdc.Reject{"JSONLReader": bad[0].Reject(), "MergeJSONL": merged[0]} {
		if got.Reason != want.Reason || got.Truncated != want.Truncated || !bytes.Equal(got.Raw, want.Raw) ||
			got.Pos.Source != want.Pos.Source || got.Pos.Line != want.Pos.Line {
			t.Errorf("%s: reject %s (truncated %v, %d bytes), want %s (truncated %v, %d bytes)",
				name, got.String(), got.Truncated, len(got.Raw), want.String(), want.Truncated, len(want.Raw))
		}
	}
	if !errors.Is(bad[0], ErrLineTooLong) {
		t.Errorf("%v does not match ErrLineTooLong", bad[0])
	}
}

// A rejected line carries its byte offset, as every reject of cdclog
// does: merge's readers (the JSONLReader, and MergeJSONL's chunked reader
// fed whole or a few bytes at a time) give each bad line the position
// cdc.Reader gives it, through CRLF and blank lines, a byte order mark, an
// over-long line and a last line without its end.
func TestARejectedLineCarriesTheOffsetCdcReaderGivesIt(t *testing.T) {
	over := longRecord(MaxLineSize + 1)
	tests := []struct {
		name  string
		input string
		bad   []int64 // the lines rejected
	}{
		{"a bad line among records", rec1(1, 1) + "\n" + "not json\n" + rec1(2, 2) + "\n", []int64{2}},
		{"CRLF and blank lines before", rec1(1, 1) + "\r\n\r\n  \n" + "[1]\r\n" + rec1(2, 2) + "\n" + "{}", []int64{4, 6}},
		{"a byte order mark on a bad first line", "\xEF\xBB\xBF{\"x\":1}\n" + rec1(1, 1) + "\nnope\n", []int64{1, 3}},
		{"after an over-long line", rec1(1, 1) + "\n" + over + "\n" + "bad\n", []int64{2, 3}},
		{"an over-long first line after a byte order mark", "\xEF\xBB\xBF" + over + "\nbad", []int64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []cdc.Pos
			for _, line := range tt.bad {
				want = append(want, cdcReject(t, tt.input, "shard.jsonl", line).Pos)
			}
			_, _, bad, err := readAll(t, strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			var fromReader []cdc.Pos
			for _, le := range bad {
				rj := le.Reject()
				fromReader = append(fromReader, rj.Pos)
			}
			if !slices.Equal(fromReader, want) {
				t.Errorf("JSONLReader: rejects at %v, want %v", fromReader, want)
			}
			readers := map[string]func() io.Reader{"whole": func() io.Reader { return strings.NewReader(tt.input) }}
			if len(tt.input) < 1<<10 { // a long line read 7 bytes at a time would take minutes
				readers["7 bytes a read"] = func() io.Reader { return &smallReads{s: tt.input, n: 7} }
			}
			for name, r := range readers {
				var merged keptRejects
				opts := MergeOptions{OnError: cdc.Quarantine, Quarantine: &merged, Log: slog.New(slog.DiscardHandler)}
				if _, err := MergeJSONL(context.Background(), []Shard{{Name: "shard.jsonl", R: r()}}, io.Discard, opts); err != nil {
					t.Fatalf("MergeJSONL, %s: %v", name, err)
				}
				var got []cdc.Pos
				for _, rj := range merged {
					got = append(got, rj.Pos)
				}
				if !slices.Equal(got, want) {
					t.Errorf("MergeJSONL, %s: rejects at %v, want %v", name, got, want)
				}
			}
		})
	}
}

// smallReads returns at most n bytes of s per Read.
type smallReads struct {
	s string
	n int
}

func (r *smallReads) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.s)
	r.s = r.s[k:]
	return k, nil
}
