package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
)

// retainFixture ingests a stream in small batches (many output chunks)
// and registers a consumer at record at.
func retainFixture(t *testing.T, at uint64) (db string, clean []byte) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 21, Times: 3000})
	db = filepath.Join(dir, "state.db")
	clean = []byte(mustRunBin(t, nil, "ingest", "--db", db, "--batch-messages", "200", in).Stdout)
	p, err := recovery.Open(db, recovery.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Consumer("billing")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(context.Background(), at-1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return db, clean
}

func gcJSON(t *testing.T, args ...string) recovery.GCResult {
	t.Helper()
	r := mustRunBin(t, nil, append(append([]string{"gc"}, args...), "--json")...)
	var res recovery.GCResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("gc --json: %v: %s", err, r.Stdout)
	}
	return res
}

// linesFrom returns the lines of b from line n (1-based) on.
func linesFrom(b []byte, n uint64) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	return bytes.Join(lines[n-1:], nil)
}

func TestGCKeepsTheWholeOutputLogWithoutRetainOutput(t *testing.T) {
	db, clean := retainFixture(t, 500)
	res := gcJSON(t, "--db", db)
	if res.OutputFrom != 1 || res.OutputRecordsDropped != 0 || !res.Compacted {
		t.Fatalf("gc without --retain-output: %+v", res)
	}
	if got := mustRunBin(t, nil, "replay", "--db", db).Stdout; got != string(clean) {
		t.Fatal("replay after gc differs from the clean stream")
	}
}

func TestGCRetainOutputNeverDropsWhatAConsumerHasNotCommitted(t *testing.T) {
	db, clean := retainFixture(t, 500)
	r := mustRunBin(t, nil, "gc", "--db", db, "--retain-output", "0", "--keep-wal", "100000")
	for _, want := range []string{"output kept from:", `output held by:   consumer "billing", which has not committed record 500`} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("gc --retain-output 0 prints no %q:\n%s", want, r.Stdout)
		}
	}
	s := dbStatus(t, db)
	if s.OutputFrom <= 1 || s.OutputFrom > 500 {
		t.Fatalf("after gc --retain-output 0 with a consumer at 500, the log starts at %d", s.OutputFrom)
	}
	from := fmt.Sprint(s.OutputFrom)

	// What is kept replays exactly; what is not is refused with where the log starts.
	if got := mustRunBin(t, nil, "replay", "--db", db, "--from-seq", "500").Stdout; got != string(linesFrom(clean, 500)) {
		t.Fatal("replay --from-seq 500 after retention differs from the clean stream")
	}
	for _, args := range [][]string{{"replay", "--db", db}, {"replay", "--db", db, "--from-seq", "1"}} {
		res := testbin.Run(t, nil, args...)
		if res.Code != exitFailure || !strings.Contains(res.Stderr, "gc's retention dropped the output records before "+from) {
			t.Fatalf("%q after retention: %v", args, res)
		}
	}
	if out := inspectDB(t, db, "output", "--limit", "1", "--json"); !strings.HasPrefix(out, `{"seq":`+from+",") {
		t.Fatalf("inspect output starts at %s, want %s", out, from)
	}
	verify := mustRunBin(t, nil, "replay", "--db", db, "--verify").Stdout
	if !strings.Contains(verify, "from record "+from+" on: gc's retention dropped the output before it") || !strings.HasSuffix(verify, "identical\n") || strings.HasPrefix(verify, "verified 0 ") {
		t.Fatalf("replay --verify after retention: %s", verify)
	}
	check := mustRunBin(t, nil, "check", "--db", db).Stdout
	if !strings.Contains(check, "from record "+from+" on") || !strings.Contains(check, "ok: every check holds") {
		t.Fatalf("check after retention: %s", check)
	}

	// Once the consumer is gone, the log drops to what the retention keeps.
	mustRunBin(t, nil, "consumer", "delete", "--db", db, "billing")
	res := gcJSON(t, "--db", db, "--retain-output", "100")
	end := s.OutputRecords + 1
	if res.OutputFrom <= s.OutputFrom || res.OutputFrom > end-100 || !strings.Contains(res.OutputHeldBy, "last 100 records") {
		t.Fatalf("gc --retain-output 100 without consumers: %+v (end %d)", res, end)
	}
	if got := mustRunBin(t, nil, "replay", "--db", db, "--from-seq", fmt.Sprint(res.OutputFrom)).Stdout; got != string(linesFrom(clean, res.OutputFrom)) {
		t.Fatal("the records kept differ from the clean stream")
	}
}

func TestGCRetainOutputRefusesWhatItCannotRead(t *testing.T) {
	db, _ := retainFixture(t, 2)
	for _, v := range []string{"-1", "soon", "0s", "1.5"} {
		res := testbin.Run(t, nil, "gc", "--db", db, "--retain-output", v)
		if res.Code != exitUsage || !strings.Contains(res.Stderr, "--retain-output") {
			t.Errorf("--retain-output %s: %v", v, res)
		}
	}
}
