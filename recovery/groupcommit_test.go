package recovery

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// gatedObserver holds the commit goroutine in its first Committed call
// until gate is closed, and records each batch's request count.
type gatedObserver struct {
	entered chan struct{} // closed once the first commit is held
	gate    chan struct{}
	batches chan int // each committed batch's Requests
}

func (o *gatedObserver) Committed(b BatchStats) {
	select {
	case <-o.entered:
	default:
		close(o.entered)
		<-o.gate
	}
	o.batches <- b.Requests
}

func (o *gatedObserver) OutputSynced(time.Duration) {}

// TestRequestsArrivingWhileThePipelineIsBusyJoinOneBatch stalls the commit
// goroutine until every batch of the pipeline is taken, then submits
// requests one at a time, each well after the batch delay: they all wait
// for the same idle batch, so they commit together rather than the first
// alone (the group commit grows when commits are the bottleneck).
func TestRequestsArrivingWhileThePipelineIsBusyJoinOneBatch(t *testing.T) {
	obs := &gatedObserver{entered: make(chan struct{}), gate: make(chan struct{}), batches: make(chan int, 64)}
	p := openTest(t, dbPath(t), Options{Observer: obs, BatchDelay: time.Millisecond})
	defer p.Close()
	ctx := context.Background()
	next := uint64(0)
	submit := func() *Pending {
		t.Helper()
		m := cdc.NewProgress(next, next+1)
		next++
		w, err := p.Submit(ctx, Request{Msgs: []cdc.Message{m}})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return w
	}
	var all []*Pending
	all = append(all, submit())
	<-obs.entered // batch 1 is held in its commit
	// Batches 2 and 3 take the other two works of the pipeline (workCount):
	// the pause lets the apply goroutine take each alone, even at load.
	for range workCount - 1 {
		all = append(all, submit())
		time.Sleep(200 * time.Millisecond)
	}
	const waiting = 6
	for range waiting {
		all = append(all, submit())
		time.Sleep(10 * time.Millisecond) // ten times the batch delay
	}
	close(obs.gate)
	for _, w := range all {
		if _, err := w.Wait(ctx); err != nil {
			t.Fatalf("wait: %v", err)
		}
	}
	var sizes []int
	for n := 0; n < len(all); {
		r := <-obs.batches
		sizes = append(sizes, r)
		n += r
	}
	if len(sizes) < workCount || slices.Max(sizes[:workCount]) != 1 {
		t.Fatalf("batches of %v requests: the first %d were to be one request each, to fill the pipeline", sizes, workCount)
	}
	if last := sizes[len(sizes)-1]; last != waiting {
		t.Fatalf("batches of %v requests: the %d submitted while every batch was busy committed in a batch of %d, want all together",
			sizes, waiting, last)
	}
}
