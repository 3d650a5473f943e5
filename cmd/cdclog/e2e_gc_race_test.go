package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
)

// stressEnv sets how long TestConcurrentGCNeverLosesAnAcknowledgedMessage
// runs (a Go duration, such as 2m, for a soak); the default run is short.
const stressEnv = "CDCLOG_GC_STRESS"

// stressDuration returns the stress test's running time.
func stressDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(stressEnv)
	if v == "" {
		if testing.Short() {
			return time.Second
		}
		return 3 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", stressEnv, v, err)
	}
	return d
}

// tally counts how the child processes of a stress test ended.
type tally struct {
	mu       sync.Mutex
	ok, busy map[string]int // by command: exit 0, gave up on the lock
	acked    []string       // the data of every acknowledged update
	failures []string       // any other ending, with its stderr
}

func (ta *tally) record(cmd string, r testbin.Result, data ...string) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	switch {
	case r.Code == 0:
		ta.ok[cmd]++
		ta.acked = append(ta.acked, data...)
	case r.Code == exitFailure && strings.Contains(r.Stderr, "locked by another process"):
		ta.busy[cmd]++
	default:
		ta.failures = append(ta.failures, fmt.Sprintf("%s: %v", cmd, r))
	}
}

// runChild runs cdclog to completion without failing t, which only the
// test's own goroutine may do.
func runChild(ctx context.Context, t *testing.T, stdin string, args ...string) testbin.Result {
	cmd, stdout, stderr := testbin.Command(t, strings.NewReader(stdin), args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return testbin.Result{Code: -2, Stderr: err.Error()}
	}
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	})
	defer stop()
	err := cmd.Wait()
	return testbin.Finish(cmd, err, stdout, stderr, time.Since(start))
}

// TestConcurrentGCNeverLosesAnAcknowledgedMessage: two gc loops compact
// the database over and over while short ingests, each adding two
// messages from stdin, start and finish, and inspect and replay read it.
// gc replaces the file by rename, so an ingest that locked the file just
// replaced would commit to a file no one reads again. Every ingest that
// exits 0 must find its messages in the database at the end; a process
// that fails may only have given up on the lock. CDCLOG_GC_STRESS=2m
// runs it longer.
func TestConcurrentGCNeverLosesAnAcknowledgedMessage(t *testing.T) {
	testbin.Path(t) // build before the goroutines start
	d := stressDuration(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	mustRunBin(t, strings.NewReader(`{"update":{"data":"seed","time":1,"diff":1}}`+"\n"), "--quiet", "ingest", "--db", db)

	ta := &tally{ok: map[string]int{}, busy: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	loop := func(body func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				body(i)
			}
		}()
	}
	for range 2 {
		loop(func(int) {
			ta.record("gc", runChild(ctx, t, "", "--quiet", "gc", "--db", db, "--lock-timeout", "10s"))
		})
	}
	for w := range 3 {
		loop(func(i int) {
			a, b := fmt.Sprintf("w%d-%d-a", w, i), fmt.Sprintf("w%d-%d-b", w, i)
			in := fmt.Sprintf(`{"update":{"data":%q,"time":%d,"diff":1}}`+"\n"+`{"update":{"data":%q,"time":%d,"diff":1}}`+"\n",
				a, 2+i, b, 3+i)
			ta.record("ingest", runChild(ctx, t, in, "--quiet", "ingest", "--db", db, "--lock-timeout", "10s"), a, b)
		})
	}
	loop(func(i int) {
		args := []string{"--quiet", "inspect", "--db", db, "--lock-timeout", "10s", "status", "--json"}
		if i%2 == 1 {
			args = []string{"--quiet", "replay", "--db", db, "--lock-timeout", "10s"}
		}
		ta.record(args[1], runChild(ctx, t, "", args...))
	})
	wg.Wait()

	for _, f := range ta.failures {
		t.Error(f)
	}
	stored := map[string]bool{}
	r, err := recovery.OpenReader(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.WAL(0, ^uint64(0), func(we *recovery.WALEntry) error {
		if we.Msg.Kind == cdc.KindUpdate {
			stored[string(bytes.Trim(we.Msg.Update.Data, `"`))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, a := range ta.acked {
		if !stored[a] {
			lost = append(lost, a)
		}
	}
	t.Logf("in %v: exit 0 %v, gave up on the lock %v; %d messages acknowledged, %d stored",
		d, ta.ok, ta.busy, len(ta.acked), len(stored)-1)
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged messages are not in the database: %v", len(lost), len(ta.acked), lost)
	}
	if ta.ok["ingest"] == 0 || ta.ok["gc"] == 0 {
		t.Fatalf("the stress test proved nothing: exit 0 %v", ta.ok)
	}
}
