package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

// The embedded API under kill -9: a child process (this test binary in
// child mode "consumer") appends a mangled stream through the recovery API
// and runs a named Consumer that handles each output record by appending
// it to a file, then commits its position. The test kills the child at
// random instants and restarts it until it finishes.
//
// What exactly-once means for such a consumer: it handles a record, then
// commits. A kill between the two leaves a record handled but not
// committed, which the restarted consumer will handle again; so its
// handling must be undone or made idempotent. Here the child, on start,
// truncates its file to the records below its committed position (as a
// transactional sink would roll back), then goes on from that position.
// The test checks after every kill, before the restart, that the file
// holds records 1..m in order with m = P-1 or m = P, P being the
// committed position (nothing committed without being handled, at most
// one record handled without being committed), and at the end that it
// holds every output record exactly once, in order, equal to the stored
// output and to the in-memory receiver's clean stream.

const consumerName = "handler"

// Environment of the consumer child.
const (
	envDB      = "CDCLOG_TEST_DB"
	envInput   = "CDCLOG_TEST_INPUT"
	envHandled = "CDCLOG_TEST_HANDLED"
)

// runConsumerChild is the child: append the input from the committed
// cursor on, and handle the output until every record is handled.
func runConsumerChild() (int, error) {
	db, input, handled := os.Getenv(envDB), os.Getenv(envInput), os.Getenv(envHandled)
	msgs, err := readMessages(input)
	if err != nil {
		return 1, err
	}
	p, err := recovery.Open(db, recovery.Options{Logger: quietLogger(), BatchMessages: 2000})
	if err != nil {
		return 1, err
	}
	defer p.Close()
	c, err := p.Consumer(consumerName)
	if err != nil {
		return 1, err
	}
	f, err := rollBackHandled(handled, c.Position())
	if err != nil {
		return 1, err
	}
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handledUpTo atomic.Uint64
	handledUpTo.Store(c.Position() - 1)
	appendErr := make(chan error, 1)
	go func() {
		appendErr <- appendFromCursor(ctx, p, msgs)
		// Everything is appended: stop once every record is handled.
		end := p.OutputEnd()
		for handledUpTo.Load() < end-1 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var line []byte
	for rec, err := range c.Records(ctx) {
		if err != nil {
			if errors.Is(err, context.Canceled) {
				break
			}
			return 1, err
		}
		line = strconv.AppendUint(line[:0], rec.Seq, 10)
		line = append(line, '\t')
		line = append(cdc.AppendJSON(line, &rec.Msg), '\n')
		if _, err := f.Write(line); err != nil { // handle,
			return 1, err
		}
		if err := c.Commit(context.Background(), rec.Seq); err != nil { // then commit
			return 1, err
		}
		handledUpTo.Store(rec.Seq)
	}
	if err := <-appendErr; err != nil {
		return 1, err
	}
	return 0, p.Close()
}

// appendFromCursor appends msgs from the committed cursor on, committing
// the cursor with each request.
func appendFromCursor(ctx context.Context, p *recovery.Processor, msgs []cdc.Message) error {
	start := 0
	if v := p.Cursor("input"); v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return fmt.Errorf("cursor %q: %v", v, err)
		}
		start = n
	}
	const per = 500
	for i := start; i < len(msgs); i += per {
		j := min(len(msgs), i+per)
		w, err := p.Submit(ctx, recovery.Request{Msgs: msgs[i:j], Cursor: "input", CursorValue: []byte(strconv.Itoa(j))})
		if err != nil {
			return err
		}
		if _, err := w.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// rollBackHandled keeps, of the handled file, the records below next (the
// ones whose commit completed) and opens it for appending.
func rollBackHandled(path string, next uint64) (*os.File, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	recs, _ := parseHandled(data)
	var keep int
	for i, r := range recs {
		if r.seq != uint64(i+1) {
			return nil, fmt.Errorf("handled file: record %d has sequence number %d", i+1, r.seq)
		}
		if r.seq < next {
			keep += len(r.line)
		}
	}
	if uint64(len(recs)) < next-1 {
		return nil, fmt.Errorf("handled file has %d records, but the consumer committed %d", len(recs), next-1)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(keep)); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// handledRecord is one line of the handled file: "seq<TAB>record\n".
type handledRecord struct {
	seq  uint64
	line []byte // the whole line, newline included
	msg  []byte // the record, newline included
}

// parseHandled parses the handled file; a last line without its newline
// (a write cut by the kill) is left out and reported as torn.
func parseHandled(data []byte) (recs []handledRecord, torn bool) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, true
		}
		l := data[:i+1]
		data = data[i+1:]
		tab := bytes.IndexByte(l, '\t')
		seq, err := strconv.ParseUint(string(l[:max(tab, 0)]), 10, 64)
		if tab < 0 || err != nil {
			return recs, true
		}
		recs = append(recs, handledRecord{seq: seq, line: l, msg: l[tab+1:]})
	}
	return recs, false
}

// readMessages decodes a JSON Lines file.
func readMessages(path string) ([]cdc.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := cdc.NewReader(f, cdc.JSONL, path)
	var msgs []cdc.Message
	for {
		var m cdc.Message
		err := r.Next(&m)
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
}

// consumerPosition reads the consumer's committed position (the next
// record it will handle) from the database, read-only.
func consumerPosition(t *testing.T, path string) uint64 {
	t.Helper()
	if sizeOrMinusOne(path) <= 0 {
		return 1
	}
	r, err := recovery.OpenReader(path, 0)
	if errors.Is(err, store.ErrForeign) && emptyBolt(t, path) {
		return 1 // killed before the buckets were created
	}
	if err != nil {
		t.Fatalf("open the database read-only: %v", err)
	}
	defer r.Close()
	next, _, err := r.ConsumerPosition(consumerName)
	if err != nil {
		t.Fatalf("read the consumer's position: %v", err)
	}
	return next
}

// TestConsumerHandlesEachRecordOnceAcrossKills: see the comment at the top
// of this file.
func TestConsumerHandlesEachRecordOnceAcrossKills(t *testing.T) {
	times, kills := uint64(3000), 12
	switch {
	case os.Getenv("CDCLOG_SOAK") != "":
		kills, _ = strconv.Atoi(os.Getenv("CDCLOG_SOAK"))
		times = 6000
	case testing.Short():
		times, kills = 1000, 5
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 99))
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 13, Times: times})
	clean := inMemoryClean(t, in, cdc.JSONL)
	var wantHandled []byte
	for i, l := range bytes.SplitAfter(clean, []byte("\n")) {
		if len(l) > 0 {
			wantHandled = append(append(strconv.AppendUint(wantHandled, uint64(i+1), 10), '\t'), l...)
		}
	}
	db, handled := filepath.Join(dir, "state.db"), filepath.Join(dir, "handled")

	// Rounds on a fresh database, until the kills are done: a round ends
	// when the child finishes, which a late kill may let it do early.
	var how []string
	for round := 1; len(how) < kills || round == 1; round++ {
		if round > kills+3 {
			t.Fatalf("%d rounds for %d kills: the child finishes before the kills", round, kills)
		}
		os.Remove(db)
		os.Remove(handled)
		for attempt := 0; ; attempt++ {
			if attempt > kills+20 {
				t.Fatalf("the child did not finish after %d attempts", attempt)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childModeEnv+"=consumer", envDB+"="+db, envInput+"="+in, envHandled+"="+handled)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			trigger, desc := func(time.Duration) bool { return false }, "no kill"
			if len(how) < kills {
				cur := max(sizeOrMinusOne(handled), 0)
				target := rng.Int64N(int64(len(wantHandled)))
				if target <= cur || rng.IntN(5) == 0 {
					// While restarting: opening, recovering, rolling back.
					d := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
					trigger, desc = func(e time.Duration) bool { return e >= d }, fmt.Sprintf("at %v", d.Round(100*time.Microsecond))
				} else {
					trigger = func(time.Duration) bool { return sizeOrMinusOne(handled) >= target }
					desc = fmt.Sprintf("at handled byte %d of %d", target, len(wantHandled))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), testbin.DefaultTimeout)
			r, err := testbin.KillWhen(ctx, cmd, &stdout, &stderr, trigger)
			cancel()
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			if !r.Signaled {
				if r.Code != 0 {
					t.Fatalf("child (%s): %v", desc, r)
				}
				break
			}
			how = append(how, desc)
			// Nothing committed without being handled; at most one record
			// handled without being committed; all in order.
			next := consumerPosition(t, db)
			recs, _ := parseHandled(readFile(t, handled))
			for i, rec := range recs {
				if rec.seq != uint64(i+1) {
					t.Fatalf("after kill %d (%s): handled record %d has sequence number %d", len(how), desc, i+1, rec.seq)
				}
			}
			if m := uint64(len(recs)); m+1 < next || m > next {
				t.Fatalf("after kill %d (%s): %d records handled, the consumer committed %d", len(how), desc, m, next-1)
			}
		}
		got := readFile(t, handled)
		if !bytes.Equal(got, wantHandled) {
			t.Fatalf("round %d, after kills %s: the handled records are not the clean stream, each once, in order: %s",
				round, strings.Join(how, ", "), firstDifference(got, wantHandled))
		}
		if stored := storedOutput(t, db, cdc.JSONL); !bytes.Equal(stored, clean) {
			t.Fatalf("round %d: the stored output differs from the clean stream: %s", round, firstDifference(stored, clean))
		}
	}
	t.Logf("%d records handled exactly once across %d kills (%s)", bytes.Count(clean, []byte("\n")), len(how), strings.Join(how, ", "))
}
