package cdc

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReaderAllYieldsMessagesThenTheFirstError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		stop    int // stop the loop after this many messages; 0: never
		want    []string
		wantErr string
	}{
		{"to the end", lineA + "\n" + lineB + "\n", 0, []string{`update("a", t=1, +1)`, `finish(t=2)`}, ""},
		{"empty", "", 0, nil, ""},
		{"stops at a bad line", lineA + "\nnot json\n" + lineB + "\n", 0, []string{`update("a", t=1, +1)`}, "in:2"},
		{"the loop stops early", lineA + "\n" + lineB + "\n", 1, []string{`update("a", t=1, +1)`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var gotErr error
			for m, err := range NewReader(strings.NewReader(tc.in), JSONL, "in").All() {
				if err != nil {
					gotErr = err
					continue // All yields nothing after it
				}
				got = append(got, m.String())
				if len(got) == tc.stop {
					break
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("messages %q, want %q", got, tc.want)
			}
			var de *DecodeError
			switch {
			case tc.wantErr == "" && gotErr != nil:
				t.Errorf("error %v, want none", gotErr)
			case tc.wantErr != "" && (!errors.As(gotErr, &de) || !strings.Contains(gotErr.Error(), tc.wantErr)):
				t.Errorf("error %v, want a DecodeError at %s", gotErr, tc.wantErr)
			}

			var seqErr error
			var n int
			for range NewReader(strings.NewReader(tc.in), JSONL, "in").Messages(&seqErr) {
				n++
			}
			if tc.stop == 0 && (n != len(tc.want) || (seqErr != nil) != (tc.wantErr != "")) {
				t.Errorf("Messages: %d messages and %v, want %d and an error %v", n, seqErr, len(tc.want), tc.wantErr != "")
			}
		})
	}
}

func TestWriterWriteAllCountsWhatItWrote(t *testing.T) {
	msgs := []Message{NewFinish(1), NewFinish(2)}
	var buf bytes.Buffer
	w := NewWriter(&buf, JSONL)
	n, err := w.WriteAll(slices.Values(msgs))
	if err != nil || n != 2 {
		t.Fatalf("WriteAll = %d, %v", n, err)
	}
	if buf.Len() != 0 {
		t.Errorf("WriteAll flushed %q", buf.String())
	}
	if err := w.Flush(); err != nil || buf.String() != `{"finish":{"time":1}}`+"\n"+`{"finish":{"time":2}}`+"\n" {
		t.Errorf("after Flush: %q, %v", buf.String(), err)
	}
	if n, err := NewWriter(&buf, Format(99)).WriteAll(slices.Values(msgs)); err == nil || n != 0 {
		t.Errorf("WriteAll to an unknown format = %d, %v", n, err)
	}
}
