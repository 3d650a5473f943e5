package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
)

// TestIngestReleasesTheLastTimesOfTheRangeWithItsPendingStateOnDisk
// moves a held-back stream to the end of the time range (its last time is
// 18446744073709551615) and ingests its updates, then its statements, with
// a pending-memory budget far below what is pending: the WAL keys, the
// memory horizon, the reopen with a horizon and the loads back all reach
// the last time. The output file must be cdclog demangle's of the same
// input, whose updates are the original stream's, moved.
func TestIngestReleasesTheLastTimesOfTheRangeWithItsPendingStateOnDisk(t *testing.T) {
	const times = 5_000
	off := uint64(math.MaxUint64 - times + 1)
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.jsonl")
	writeHeldBackStream(t, orig, streamSpec{Seed: 13, Times: times})
	moved := shiftStream(t, readFile(t, orig), off)
	cut := bytes.Index(moved, []byte(`{"progress"`))
	updates, progress := filepath.Join(dir, "updates.jsonl"), filepath.Join(dir, "progress.jsonl")
	os.WriteFile(updates, moved[:cut], 0o644)
	os.WriteFile(progress, moved[cut:], 0o644)
	all := filepath.Join(dir, "moved.jsonl")
	os.WriteFile(all, moved, 0o644)

	start := strconv.FormatUint(off, 10)
	var want, stderr bytes.Buffer
	if code := run([]string{"cdclog", "--quiet", "demangle", "--start", start, all}, strings.NewReader(""), &want, &stderr); code != 0 {
		t.Fatalf("demangle: exit %d: %s", code, stderr.String())
	}
	if got, exp := updateLines(want.Bytes()), updateLines(shiftStream(t, inMemoryClean(t, orig, cdc.JSONL), off)); !slices.Equal(got, exp) {
		t.Fatalf("demangle of the moved stream releases %d update lines, the moved clean stream has %d", len(got), len(exp))
	}
	if !bytes.Contains(want.Bytes(), []byte(`"time":18446744073709551615`)) {
		t.Fatal("the clean stream does not reach the last time")
	}

	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	env := []string{"CDCLOG_PENDING_MEMORY=16384"}
	for _, in := range []string{updates, progress} {
		if r := runBinEnv(t, env, "--quiet", "ingest", "--db", db, "--start", start, "--out", out, "--batch-messages", "997", in); r.Code != 0 {
			t.Fatalf("ingest %s: %v", in, r)
		}
		if in == updates {
			if s := dbStatus(t, db); s.MemoryHorizon == nil || s.PendingOnDisk == 0 {
				t.Fatalf("after the updates: horizon %v, %d messages on disk", s.MemoryHorizon, s.PendingOnDisk)
			}
		}
	}
	if got := readFile(t, out); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the output differs from demangle's: %s", firstDifference(got, want.Bytes()))
	}
	if s := dbStatus(t, db); !s.Complete {
		t.Fatalf("the stream is not complete: %+v", s)
	}
	mustRunBin(t, nil, "--quiet", "check", "--db", db)
	if r := mustRunBin(t, nil, "--quiet", "replay", "--db", db, "--rederive"); r.Stdout != want.String() {
		t.Fatalf("replay --rederive differs: %s", firstDifference([]byte(r.Stdout), want.Bytes()))
	}
}

// shiftStream moves every time in the JSON Lines stream b up by off
// (streamgen.Shift), dropping the statements that would start past the
// last time.
func shiftStream(t *testing.T, b []byte, off uint64) []byte {
	t.Helper()
	r := cdc.NewReader(bytes.NewReader(b), cdc.JSONL, "stream")
	var out []byte
	for {
		var m cdc.Message
		err := r.Next(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !streamgen.Shift(&m, off) {
			continue
		}
		if out, err = cdc.AppendMessage(out, cdc.JSONL, &m); err != nil {
			t.Fatal(err)
		}
	}
}
