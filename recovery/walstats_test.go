package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// TestMaintainedWALStatsEqualAFreshWalk runs random appends, online gcs
// (with random KeepTimes), clean reopenings and kills (the database as a
// read transaction sees it while requests are in flight, which is what
// kill -9 leaves, opened in place of the original) and checks after each
// step that the WAL figures the processor keeps, and those Status
// reports, are the ones a walk of the WAL's index reads.
func TestMaintainedWALStatsEqualAFreshWalk(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			msgs := mangled(seed, withWideStatements(cleanStream(seed, 0, 1200), 7))
			inMemory(t, msgs) // the stream is valid
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			open := func() *Processor {
				return openTest(t, path, Options{NoSync: true, BatchMessages: 1 + rng.IntN(300)})
			}
			p := open()
			defer func() { p.Close() }()
			sent, kills := 0, 0
			for step := 0; sent < len(msgs); step++ {
				switch op := rng.IntN(10); {
				case op == 0:
					if err := p.Close(); err != nil {
						t.Fatal(err)
					}
					p = open()
				case op == 1:
					kills++
					p = killedWhileAppending(t, p, msgs[sent:min(len(msgs), sent+200)], filepath.Join(dir, fmt.Sprint("killed", kills, ".db")), &path, open)
				case op <= 3:
					if _, err := p.GC(context.Background(), GCOptions{KeepTimes: uint64(rng.IntN(40))}); err != nil {
						t.Fatal(err)
					}
				default:
					n := 1 + rng.IntN(600)
					appendAll(t, p, msgs[sent:min(len(msgs), sent+n)], 1+rng.IntN(100))
					sent += n
				}
				checkWALStats(t, p, step)
			}
		})
	}
}

// withWideStatements adds, every every-th time, a progress statement
// that repeats what the stream says of the times from every-1 before it
// (its lower bound far below its filing time, as a wide span), so that
// chunks' first times are not their entries' smallest times.
func withWideStatements(msgs []cdc.Message, every uint64) []cdc.Message {
	counts := map[uint64]uint64{}
	var out []cdc.Message
	for _, m := range msgs {
		out = append(out, m)
		if m.Kind == cdc.KindUpdate {
			counts[m.Update.Time]++
			continue
		}
		t := m.Progress.Lower
		if t < every || t%every != 0 {
			continue
		}
		var cs []cdc.Count
		for u := t - every + 1; u <= t; u++ {
			if c := counts[u]; c > 0 {
				cs = append(cs, cdc.Count{Time: u, Count: c})
			}
		}
		out = append(out, cdc.NewProgress(t-every+1, t+1, cs...))
	}
	return out
}

// killedWhileAppending submits msgs, copies the database as one read
// transaction sees it while they are in flight (what kill -9 leaves: the
// last commit), abandons p, and opens the copy in its place.
func killedWhileAppending(t *testing.T, p *Processor, msgs []cdc.Message, killed string, path *string, open func() *Processor) *Processor {
	t.Helper()
	w, err := p.Submit(context.Background(), Request{Msgs: msgs})
	if err != nil {
		t.Fatal(err)
	}
	// bolt.Compact reads the source in one read transaction. (tx.CopyFile
	// would close the database's own file: store opens it itself.)
	dst, err := bolt.Open(killed, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, p.db.DB, 0); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	*path = killed
	return open()
}

// checkWALStats compares, on the commit goroutine (so that no commit
// comes between), the WAL figures it keeps and the processor's with a
// walk of the index, then Status's WAL part with them.
func checkWALStats(t *testing.T, p *Processor, step int) {
	t.Helper()
	var walked wal.Stats
	err := p.maintain(context.Background(), func(tx *bolt.Tx, st *commitState) error {
		var err error
		if walked, err = readWALStats(p.db, tx); err != nil {
			return err
		}
		p.mu.Lock()
		published := p.walStats
		p.mu.Unlock()
		if st.wal != walked || published != walked {
			return fmt.Errorf("step %d: kept %+v, published %+v, a walk reads %+v", step, st.wal, published, walked)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	want := walStatus(walked, s.WAL.Floor)
	if fmt.Sprint(deref(s.WAL.MinTime), deref(s.WAL.MaxTime), s.WAL.Entries, s.WAL.Chunks, s.WAL.Bytes) !=
		fmt.Sprint(deref(want.MinTime), deref(want.MaxTime), want.Entries, want.Chunks, want.Bytes) {
		t.Fatalf("step %d: Status's WAL %+v, a walk's %+v", step, s.WAL, want)
	}
}

func deref(p *uint64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
