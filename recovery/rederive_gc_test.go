package recovery

import (
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// stepsOf returns the stored output's progress statements: one per step of
// the frontier.
func stepsOf(t *testing.T, path string) []cdc.Progress {
	t.Helper()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var steps []cdc.Progress
	err = r.Records(1, func(rec *Record) error {
		if rec.Msg.Kind == cdc.KindProgress {
			steps = append(steps, rec.Msg.Progress)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// TestVerifyAfterGCWithAFloorInsideAFrontierStep: gc --keep-wal N puts the
// WAL floor at frontier-N, which may fall strictly inside one step of the
// frontier (a progress statement [lower, upper) released at once). Verify
// on that healthy database must still find the stored output identical to
// the re-derived stream, and Rederive must give a suffix of the stored
// output. This reproduces issue 12 item 9; the floor moves up one time
// after another across many steps, at and between their bounds.
func TestVerifyAfterGCWithAFloorInsideAFrontierStep(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{BatchMessages: 300})
	appendAll(t, p, mangled(91, cleanStream(91, 0, 3000)), 50)
	frontier, _ := p.Frontier()
	p.Close()
	stored := storedOutput(t, path)
	inside := 0
	for _, s := range stepsOf(t, path) {
		if s.Lower >= 1000 && s.Upper-s.Lower >= 2 && s.Upper < 1060 {
			inside += int(s.Upper - s.Lower - 1)
		}
	}
	if inside < 10 {
		t.Fatalf("only %d times past 1000 lie strictly inside a step: the test needs wider steps", inside)
	}
	for floor := uint64(1000); floor < 1060; floor++ {
		res, err := GC(path, GCOptions{KeepTimes: frontier - floor, NoCompact: true})
		if err != nil || res.Floor != floor {
			t.Fatalf("gc: %+v, %v; want floor %d", res, err, floor)
		}
		r, err := OpenReader(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.Verify()
		if err != nil || !v.Match || v.Compared == 0 {
			t.Fatalf("verify with the WAL floor at %d: %+v, %v", floor, v, err)
		}
		var derived []byte
		err = r.Rederive(func(m *cdc.Message) error { derived = append(cdc.AppendJSON(derived, m), '\n'); return nil })
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(derived) == 0 || len(derived) >= len(stored) || string(stored[len(stored)-len(derived):]) != string(derived) {
			t.Fatalf("floor %d: the re-derived stream (%d bytes) is not a proper suffix of the stored output (%d bytes)", floor, len(derived), len(stored))
		}
	}
}

// TestGCKeepWALKeepsTheLastTimesOfACompleteStream: once an unbounded
// progress statement completes the stream, the frontier is past every
// time; gc --keep-wal N must still keep the WAL of the last N times (below
// that statement's lower bound), as it does while the stream runs, so that
// Verify and Rederive cover recent history, instead of dropping the WAL
// whole.
func TestGCKeepWALKeepsTheLastTimesOfACompleteStream(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{BatchMessages: 300})
	msgs := append(cleanStream(92, 0, 3000), cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 3000, Unbounded: true}})
	appendAll(t, p, mangled(92, msgs), 50)
	if _, done := p.Frontier(); !done {
		t.Fatal("the stream is not complete")
	}
	p.Close()
	res, err := GC(path, GCOptions{KeepTimes: 500, NoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Floor < 2000 || res.Floor > 2500 {
		// The last step may have released a few times with the
		// unbounded statement: the last frontier was at most 3000.
		t.Fatalf("gc --keep-wal 500 of a stream complete from time 3000: WAL floor %d, want 500 below the last frontier", res.Floor)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, err := r.Verify()
	if err != nil || !v.Match || v.Compared < 500 {
		t.Fatalf("verify after gc --keep-wal 500: %+v, %v; want at least 500 records compared, identical", v, err)
	}
}
