package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// TestReplayVerifyAfterGCKeepingAPartOfAFrontierStep (issue 12, item 9):
// on a healthy database, 'gc --keep-wal N' whose floor falls strictly
// inside one step of the frontier (a progress statement [lower, upper)
// released at once) must leave 'replay --verify' saying identical, exit 0.
func TestReplayVerifyAfterGCKeepingAPartOfAFrontierStep(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 12, Times: 3000})
	db := filepath.Join(dir, "state.db")
	mustRunBin(t, nil, "ingest", "--db", db, "--batch-messages", "200", in)
	s := dbStatus(t, db)
	var wide cdc.Progress
	r, err := recovery.OpenReader(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Records(1, func(rec *recovery.Record) error {
		p := rec.Msg.Progress
		if rec.Msg.Kind == cdc.KindProgress && wide.Upper == 0 && p.Lower > 1000 && p.Upper-p.Lower >= 3 {
			wide = p
		}
		return nil
	})
	r.Close()
	if wide.Upper == 0 {
		t.Fatal("no step of 3 times or more past time 1000")
	}
	keep := s.Frontier - (wide.Lower + 1)
	mustRunBin(t, nil, "gc", "--db", db, "--keep-wal", strconv.FormatUint(keep, 10))
	res := mustRunBin(t, nil, "replay", "--db", db, "--verify")
	if !strings.Contains(res.Stdout, "identical") {
		t.Fatalf("replay --verify after gc --keep-wal %d (floor %d inside [%d, %d)): %s", keep, wide.Lower+1, wide.Lower, wide.Upper, res.Stdout)
	}
}
