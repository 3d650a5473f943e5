package clean

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func convert(t *testing.T, in string) (string, ConvertResult, error) {
	t.Helper()
	var out bytes.Buffer
	res, err := Convert(cdc.NewReader(strings.NewReader(in), cdc.JSONL, "in"), cdc.NewWriter(&out, cdc.JSONL))
	return out.String(), res, err
}

const (
	naiveA1  = `{"update":{"data":"a","time":0,"diff":1}}`
	naiveB1  = `{"update":{"data":"b","time":0,"diff":1}}`
	naiveB_1 = `{"update":{"data":"b","time":0,"diff":-1}}`
	finish0  = `{"finish":{"time":0}}`
	naiveA2  = `{"update":{"data":"a","time":2,"diff":2}}`
)

func TestConvertConsolidatesEachFinishedTimeAndCountsWhatNoFinishCloses(t *testing.T) {
	out, res, err := convert(t, lines(naiveB1, naiveA1, naiveB_1, finish0, naiveA2))
	if err != nil {
		t.Fatal(err)
	}
	want := lines(naiveA1, `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}`, naiveA2)
	if out != want {
		t.Fatalf("output\n%s\nwant\n%s", out, want)
	}
	if res != (ConvertResult{UpdatesIn: 4, Finishes: 1, UpdatesOut: 2, Unfinished: 1, UnfinishedFrom: 2}) {
		t.Fatalf("result %+v", res)
	}
}

func TestConvertStopsAtTheFirstBadMessageAfterWritingWhatWasConverted(t *testing.T) {
	for _, tc := range []struct {
		name, bad, inErr string
	}{
		{"malformed", "not json", "in:3"},
		{"a progress statement", `{"progress":{"lower":0,"upper":1,"counts":[]}}`, "in:3"},
		{"an update at a finished time", naiveB1, "already closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, res, err := convert(t, lines(naiveA1, finish0, tc.bad, naiveA2))
			if err == nil || !strings.Contains(err.Error(), tc.inErr) {
				t.Fatalf("error %v, want one naming %q", err, tc.inErr)
			}
			if want := lines(naiveA1, `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}`); out != want {
				t.Fatalf("output %q, want what the finish released: %q", out, want)
			}
			if res.Unfinished != 0 {
				t.Fatalf("%d unfinished written after an error", res.Unfinished)
			}
		})
	}
}

func TestConvertStopsWhenItCannotWrite(t *testing.T) {
	_, err := Convert(cdc.NewReader(strings.NewReader(lines(naiveA1, finish0)), cdc.JSONL, "in"), cdc.NewWriter(failingWriter{}, cdc.JSONL))
	var we *WriteError
	if !errors.As(err, &we) || err.Error() != "write output: disk full" {
		t.Fatalf("error %v, want the output's *WriteError", err)
	}
}
