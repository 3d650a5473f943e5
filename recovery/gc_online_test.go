package recovery

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// TestOnlineGCUnderConcurrentAppendsDropsOnlyWhatNothingNeeds runs
// Processor.GC in a loop, with full retention off, while producers append
// a mangled stream and a consumer reads and commits: the consumer reads
// every record once and in order, the records gc keeps are the clean
// stream's, and the database checks clean after. Run with -race.
func TestOnlineGCUnderConcurrentAppendsDropsOnlyWhatNothingNeeds(t *testing.T) {
	path := dbPath(t)
	msgs := mangled(3, cleanStream(3, 0, 1500))
	clean := inMemory(t, msgs)
	want := bytes.Count(clean, []byte("\n"))
	p := openTest(t, path, Options{BatchMessages: 64})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// One producer appends the stream in order (the output depends on the
	// order, and so is the in-memory receiver's); others send again what
	// it has sent, which the receiver drops as duplicates, so that
	// appends from several goroutines share the commits gc runs between.
	var producers sync.WaitGroup
	var sent atomicCount
	producers.Add(1)
	go func() {
		defer producers.Done()
		for j := 0; j < len(msgs); j += 25 {
			if _, err := p.Append(ctx, msgs[j:min(len(msgs), j+25)], nil); err != nil {
				t.Errorf("append: %v", err)
				return
			}
			sent.set(j + 25)
		}
	}()
	for i := range 3 {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for k := 0; ; k++ {
				n := min(sent.get(), len(msgs))
				if n == len(msgs) && k > 0 {
					return
				}
				from := (k*37 + i*101) % max(n, 1)
				if _, err := p.Append(ctx, msgs[from:min(n, from+25)], nil); err != nil {
					t.Errorf("append again: %v", err)
					return
				}
			}
		}()
	}

	c, err := p.Consumer("reader")
	if err != nil {
		t.Fatal(err)
	}
	var read []byte
	consumed := make(chan error, 1)
	go func() {
		next := uint64(1)
		for r, err := range c.Records(ctx) {
			if err != nil {
				consumed <- err
				return
			}
			if r.Seq != next {
				t.Errorf("consumer read record %d, want %d", r.Seq, next)
			}
			next++
			read = append(cdc.AppendJSON(read, &r.Msg), '\n')
			if r.Seq%40 == 0 || r.Seq == uint64(want) {
				if err := c.Commit(ctx, r.Seq); err != nil {
					consumed <- err
					return
				}
			}
			if r.Seq == uint64(want) {
				consumed <- nil
				return
			}
		}
	}()

	gcDone := make(chan struct{})
	var gcs, dropped int
	go func() {
		defer close(gcDone)
		for ctx.Err() == nil {
			res, err := p.GC(ctx, GCOptions{RetainOutput: RetainRecords(0)})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("gc: %v", err)
				}
				return
			}
			gcs++
			dropped += res.OutputChunksDeleted
			time.Sleep(time.Millisecond)
		}
	}()
	producers.Wait()
	if err := <-consumed; err != nil {
		t.Fatalf("consumer: %v", err)
	}
	cancel()
	<-gcDone
	c.Close()
	floor := p.OutputStart()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d gc runs dropped %d output chunks; the log starts at %d of %d", gcs, dropped, floor, want)
	if !bytes.Equal(read, clean) {
		t.Fatal("the consumer did not read the clean stream")
	}
	if dropped == 0 || floor == 1 {
		t.Fatal("online gc dropped no output")
	}
	if got := recordsFrom(t, path, floor); !bytes.Equal(got, suffixFrom(clean, floor)) {
		t.Fatal("the records kept are not the clean stream's")
	}
	if rep, err := Check(path, CheckOptions{}); err != nil || !rep.OK {
		t.Fatalf("check: %v %+v", err, rep.Problems)
	}
}

// atomicCount is a count one goroutine sets and others read.
type atomicCount struct{ v atomic.Int64 }

func (a *atomicCount) set(n int) { a.v.Store(int64(n)) }
func (a *atomicCount) get() int  { return int(a.v.Load()) }
