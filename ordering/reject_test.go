package ordering

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
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
