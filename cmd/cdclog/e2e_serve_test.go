package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// TestServeUnderConcurrentProducersAndAResumedConsumer is issue 13's
// serve test: producers post a duplicated, reordered stream (cdclog gen |
// cdclog mangle) in requests of 1,000 lines, a consumer reads /v1/output
// and is killed (its connection dropped, mid-line or not) again and
// again, each time resuming from its last seq+1, and the server is killed
// with SIGKILL half-way and restarted on the same port (the producers
// re-send what was not acknowledged; the consumer reconnects). The
// consumer must read every sequence number once, in order, and the clean
// stream it reads must be cdclog demangle's:
//
//   - with one producer sending its requests in order, byte for byte;
//   - with eight producers, whose requests interleave as they happen to,
//     the same updates in the same order, and the same progress once each
//     statement is split into its times: where the frontier stops between
//     two releases depends on the order in which messages arrive, and so
//     does how the progress between two stops is batched into statements
//     (demangle/doc.go: the output depends only on the order of pushes).
func TestServeUnderConcurrentProducersAndAResumedConsumer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		producers int
		exact     bool
	}{{"one producer, byte for byte", 1, true}, {"eight producers", 8, false}} {
		t.Run(tc.name, func(t *testing.T) {
			testServeRun(t, tc.producers, tc.exact)
		})
	}
}

func testServeRun(t *testing.T, producers int, exact bool) {
	dir := t.TempDir()
	in, db := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "s.db")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 21, Times: 3000, Keys: 60})
	want := lines(inMemoryClean(t, in, cdc.JSONL))
	input := lines(readFile(t, in))
	var reqs [][]byte
	for i := 0; i < len(input); i += 1000 {
		reqs = append(reqs, []byte(strings.Join(input[i:min(i+1000, len(input))], "\n")+"\n"))
	}

	srv := startServe(t, "--db", db)
	u, _ := url.Parse(srv.url)
	base := srv.url
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var acked atomic.Int64
	var restart sync.Once
	restarted := make(chan struct{})
	killHalfway := func() {
		if acked.Add(1) == int64(len(reqs)/2) {
			restart.Do(func() {
				go func() {
					srv.kill9()
					srv = startServe(t, "--db", db, "--listen", u.Host)
					close(restarted)
				}()
			})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, producers+1)
	for g := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(reqs); i += producers {
				if err := postUntilAcked(ctx, base, reqs[i]); err != nil {
					errs <- fmt.Errorf("producer %d, request %d: %w", g, i, err)
					return
				}
				killHalfway()
			}
		}()
	}
	var got []string
	var total atomic.Int64 // the records to read, once the producers are done
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		var err error
		got, err = consumeKilledAndResumed(ctx, base, &total, rand.New(rand.NewPCG(uint64(producers), 7)))
		if err != nil {
			errs <- fmt.Errorf("consumer: %w", err)
		}
	}()
	wg.Wait()
	<-restarted
	_, b := httpDo(t, "GET", base+"/v1/status", "", nil)
	total.Store(int64(jsonObject(t, b)["output_records"].(float64)))
	<-consumed
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st, b := httpDo(t, "GET", base+"/v1/output?from="+strconv.Itoa(len(got)+1)+"&limit=1&wait=100ms", "", nil); st != 200 || len(b) != 0 {
		t.Fatalf("a record past the end of the clean stream: %d %s", st, b)
	}
	srv.signal(syscall.SIGTERM)
	if r := srv.wait(30 * time.Second); r.Code != 0 || !strings.Contains(r.Stderr, "serve stopped") {
		t.Fatalf("serve after SIGTERM: %v", r)
	}
	compareClean(t, got, want, exact)
}

// postUntilAcked posts body until the server answers 200, retrying while
// it cannot be reached or answers 503 (killed and restarting): re-sending
// what may have been committed is harmless.
func postUntilAcked(ctx context.Context, base string, body []byte) error {
	for {
		resp, err := http.Post(base+"/v1/append", "application/x-ndjson", bytes.NewReader(body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				return nil
			case http.StatusServiceUnavailable:
			default:
				return fmt.Errorf("status %d: %s", resp.StatusCode, b)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not acknowledged: %w (last error %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// consumeKilledAndResumed reads the stream until it holds total records
// (0 until known), dropping its connection after a random number of
// bytes (or at a server's death) and resuming from the record after the
// last whole line it read, as a consumer that keeps its position would.
// It returns the records without their seq, having checked that each seq
// follows the one before.
func consumeKilledAndResumed(ctx context.Context, base string, total *atomic.Int64, rng *rand.Rand) ([]string, error) {
	var got []string
	kills := 0
	ended := func() bool { n := total.Load(); return n > 0 && len(got) >= int(n) }
	for !ended() {
		if ctx.Err() != nil {
			return got, fmt.Errorf("%d records after %d kills: %w", len(got), kills, ctx.Err())
		}
		next := uint64(len(got) + 1)
		// A stream, or now and then a long poll.
		q := fmt.Sprintf("%s/v1/output?from=%d", base, next)
		if rng.IntN(4) == 0 {
			q += fmt.Sprintf("&limit=%d&wait=50ms", 1+rng.IntN(5000))
		}
		// A stream is held open once caught up: the consumer gives up
		// on it after a while, to see whether it has read everything.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(rctx, "GET", q, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			time.Sleep(20 * time.Millisecond) // the server is restarting
			continue
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			return got, fmt.Errorf("from %d: status %d: %s", next, resp.StatusCode, b)
		}
		// The consumer dies after this many bytes, most often in the
		// middle of a line, which it then never applied.
		budget := 1 + rng.IntN(200_000)
		br := bufio.NewReader(io.LimitReader(resp.Body, int64(budget)))
		for !ended() {
			line, err := br.ReadString('\n')
			if err != nil {
				break // killed, mid-line or at a line's end, or the server died
			}
			seq, clean, err := stripSeq(strings.TrimSuffix(line, "\n"))
			if err == nil && seq != uint64(len(got)+1) {
				err = fmt.Errorf("asked from %d, got seq %d after %d records", next, seq, len(got))
			}
			if err != nil {
				resp.Body.Close()
				cancel()
				return got, err
			}
			got = append(got, clean)
		}
		resp.Body.Close()
		cancel()
		kills++
	}
	return got, nil
}

// compareClean checks the consumer's clean stream against demangle's:
// exactly, or in the normal form of progressForm.
func compareClean(t *testing.T, got, want []string, exact bool) {
	t.Helper()
	same := strings.Join(got, "\n") == strings.Join(want, "\n")
	if exact {
		if !same {
			t.Fatalf("the clean stream read from serve differs from demangle's: %s", firstDiff(got, want))
		}
		return
	}
	gu, gp, err := progressForm(got)
	if err != nil {
		t.Fatal(err)
	}
	wu, wp, err := progressForm(want)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(gu, "\n") != strings.Join(wu, "\n") {
		t.Fatalf("the updates read from serve differ from demangle's: %s", firstDiff(gu, wu))
	}
	if strings.Join(gp, "\n") != strings.Join(wp, "\n") {
		t.Fatalf("the progress read from serve differs from demangle's, time by time: %s", firstDiff(gp, wp))
	}
	t.Logf("%d records read from serve (demangle: %d); byte-identical: %v", len(got), len(want), same)
}

// progressForm splits a clean stream into its updates, in order, and its
// progress statements cut into one "time count" line per time they cover
// ("from T on" for an unbounded one): the stream less the batching of
// its statements.
func progressForm(stream []string) (updates, progress []string, err error) {
	r := cdc.NewReader(strings.NewReader(strings.Join(stream, "\n")+"\n"), cdc.JSONL, "clean")
	for {
		var m cdc.Message
		switch err := r.Next(&m); {
		case errors.Is(err, io.EOF):
			return updates, progress, nil
		case err != nil:
			return nil, nil, err
		}
		if m.Kind == cdc.KindUpdate {
			updates = append(updates, string(cdc.AppendJSON(nil, &m)))
			continue
		}
		p := &m.Progress
		if p.Unbounded {
			progress = append(progress, fmt.Sprintf("from %d on: %v", p.Lower, p.Counts))
			continue
		}
		counts := map[uint64]uint64{}
		for _, c := range p.Counts {
			counts[c.Time] = c.Count
		}
		for t := p.Lower; t < p.Upper; t++ {
			progress = append(progress, fmt.Sprintf("%d %d", t, counts[t]))
		}
	}
}

// firstDiff describes where two lists of lines first differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(got), len(want))
}
