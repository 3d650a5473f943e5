package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStdinReadAgainQuarantinesItsBadLinesOnce: the same input sent twice
// on stdin meets its bad lines again; each is quarantined once (issue
// 12.16).
func TestStdinReadAgainQuarantinesItsBadLinesOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	in := cdcTimes(0, 5) + "not json\n" + cdcTimes(5, 10) + `{"update":{"data":"k1","time":9,"diff":0}}` + "\n"
	for range 2 {
		mustRunBin(t, strings.NewReader(in), "--quiet", "ingest", "--on-error", "quarantine", "--db", db)
	}
	if q := quarantined(t, db); len(q) != 2 {
		t.Fatalf("%d quarantine records after the same input twice, want 2: %+v", len(q), q)
	}
}

// TestASummaryAfterAFailureCountsOnlyWhatWasCommitted: a violation stops
// ingest with requests in flight after it; the summary's accepted count is
// what the database holds, not what was read (issue 12.16).
func TestASummaryAfterAFailureCountsOnlyWhatWasCommitted(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	// Time 2000's update, then another diff for it, then much more.
	in := cdcTimes(0, 2000) + `{"update":{"data":"x","time":2000,"diff":1}}` + "\n" +
		`{"update":{"data":"x","time":2000,"diff":-1}}` + "\n" + cdcTimes(2001, 40000)
	path := writeFile(t, dir, "in.jsonl", in)
	r := expectFailure(t, exitViolation, nil, []string{"ingest", "--batch-messages", "64", "--db", db, path}, "in.jsonl:4002")
	accepted, err := strconv.ParseUint(logField(r.Stderr, "ingest finished", "accepted"), 10, 64)
	if err != nil {
		t.Fatalf("no accepted count in the summary: %v\n%s", err, r.Stderr)
	}
	st := dbStatus(t, db)
	if stored := st.AcceptedUpdates + st.AcceptedProgress; accepted != stored {
		t.Fatalf("summary says %d accepted, the database holds %d", accepted, stored)
	}
	if read := logField(r.Stderr, "ingest finished", "messages"); read == fmt.Sprint(accepted) {
		t.Logf("all %s messages read were committed (nothing was in flight)", read)
	}
}
