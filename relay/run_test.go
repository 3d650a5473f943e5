package relay

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// runInBackground starts r and returns a channel that gets its outcome.
func runInBackground(ctx context.Context, r *Run, p *recovery.Processor) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, p)
		done <- err
	}()
	return done
}

func wait(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// complete reports whether p has the whole stream of times times.
func complete(p *recovery.Processor, times uint64) bool {
	f, done := p.Frontier()
	return done || f >= times
}

func TestRunReadsInTurnInputsThenEndlessOnesConcurrentlyAndForwardsEverything(t *testing.T) {
	p, _ := openProcessor(t)
	msgs := stream(300)
	const times = 300
	third := len(msgs) / 3
	a, b := newChanSource("a"), newChanSource("b")
	for i, m := range msgs[third:] {
		if i%2 == 0 {
			a.msgs <- m
		} else {
			b.msgs <- m
		}
	}
	out := &memOutput{}
	sink := newSink(p, out)
	r := &Run{InTurn: []recovery.Source{&sliceSource{name: "file", msgs: msgs[:third]}}, Endless: []recovery.Source{a, b}, Sink: sink, Logger: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	done := runInBackground(ctx, r, p)
	waitFor(t, "the whole stream forwarded", func() bool { return complete(p, times) && sink.Forwarder().Lag() == 0 })
	cancel()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want the context's end", err)
	}
	checkAll(t, p, out)
	for name, want := range map[string]string{"file": "at", "a": "0", "b": "0"} {
		if got := string(p.Cursor(name)); got == "" || name == "file" && got != want {
			t.Errorf("cursor %s is %q", name, got)
		}
	}
	pos, err := Describe(p.Cursors(), p.OutputEnd()-1)
	if err != nil || len(pos.Sinks) != 1 {
		t.Fatalf("Describe: %+v, %v", pos, err)
	}
	if s := pos.Sinks[0]; s.Output != "mem:out" || s.SinkID != "s1" || s.Acked != p.OutputEnd()-1 || s.Lag != 0 || s.RecordedAt == "" {
		t.Errorf("recorded sink position %+v, want record %d acknowledged", s, p.OutputEnd()-1)
	}
}

func TestRunStopsEveryInputWhenOneFailsAndReturnsItsError(t *testing.T) {
	p, _ := openProcessor(t)
	a, b := newChanSource("a"), newChanSource("b")
	boom := errors.New("boom")
	done := runInBackground(context.Background(), &Run{Endless: []recovery.Source{a, b}, Logger: quiet}, p)
	a.msgs <- cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`1`), Time: 1, Diff: 1}}
	waitFor(t, "a's message committed", func() bool { return string(p.Cursor("a")) == "1" })
	b.fail <- boom
	if err := wait(t, done); !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want b's error", err)
	}
}

func TestRunStopsTheInputsWhenTheSinkFindsAForeignOutput(t *testing.T) {
	p, _ := openProcessor(t)
	if _, err := p.Append(context.Background(), stream(20), nil); err != nil {
		t.Fatal(err)
	}
	a := newChanSource("a")
	done := runInBackground(context.Background(), &Run{Endless: []recovery.Source{a}, Sink: newSink(p, &memOutput{foreign: true}), Logger: quiet}, p)
	if err := wait(t, done); !errors.Is(err, broker.ErrForeignOutput) {
		t.Fatalf("Run returned %v, want ErrForeignOutput", err)
	}
}

func TestRunDrainsForABoundedTimeOnceStoppedAndPublishForwardsTheRest(t *testing.T) {
	p, _ := openProcessor(t)
	out := &memOutput{down: true}
	a := newChanSource("a")
	for _, m := range stream(100) {
		a.msgs <- m
	}
	r := &Run{Endless: []recovery.Source{a}, Sink: newSink(p, out), DrainTimeout: 100 * time.Millisecond, Logger: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	var res Result
	done := make(chan error, 1)
	go func() {
		var err error
		res, err = r.Run(ctx, p)
		done <- err
	}()
	waitFor(t, "the stream committed", func() bool { return complete(p, 100) })
	cancel()
	start := time.Now()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %v to return after the stop, with a 100ms drain timeout", took)
	}
	if !res.DrainTimedOut || res.Unsent != p.OutputEnd()-1 {
		t.Errorf("result %+v: want the drain timed out with all %d records unsent", res, p.OutputEnd()-1)
	}
	records := p.OutputEnd() - 1
	stopped, cancelStopped := context.WithCancel(context.Background())
	cancelStopped()
	if pr, err := Publish(stopped, newSink(p, out)); !errors.Is(err, context.Canceled) || pr.Unsent != records || pr.Records != records {
		t.Errorf("a stopped Publish to a down output: %+v, %v; want all %d records unsent and context.Canceled", pr, err, records)
	}
	out.setDown(false)
	pr, err := Publish(context.Background(), newSink(p, out))
	if err != nil {
		t.Fatal(err)
	}
	if want := (PublishResult{Output: "mem:out", Records: records, Acked: records}); pr != want {
		t.Errorf("Publish: %+v, want %+v", pr, want)
	}
	checkAll(t, p, out)
	if pos, _ := Describe(p.Cursors(), p.OutputEnd()-1); len(pos.Sinks) != 1 || pos.Sinks[0].Lag != 0 {
		t.Errorf("after publish the recorded sink is %+v, want lag 0", pos.Sinks)
	}
}

func TestRunWaitsForTheOutputWhenItsInputsEnd(t *testing.T) {
	p, _ := openProcessor(t)
	out := &memOutput{down: true}
	time.AfterFunc(200*time.Millisecond, func() { out.setDown(false) })
	r := &Run{InTurn: []recovery.Source{&sliceSource{name: "f", msgs: stream(100)}}, Sink: newSink(p, out), Logger: quiet}
	res, err := r.Run(context.Background(), p)
	if err != nil || res.Unsent != 0 || res.DrainTimedOut {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	checkAll(t, p, out)
}

func TestMaxSinkLagHoldsTheInputsBackWhileTheOutputIsDown(t *testing.T) {
	p, _ := openProcessor(t)
	out := &memOutput{down: true}
	msgs := stream(400)
	// Room for the whole stream: the test must not block on a send while
	// the input is held back.
	a := &chanSource{name: "a", msgs: make(chan cdc.Message, len(msgs)), fail: make(chan error, 1)}
	// The throttle sees committed records only, so the reads in flight
	// when the output stops go on: two in flight bound that run-on to
	// about five reads (250 messages), far below the stream's 1,650
	// even when the first commit is slow (16 in flight, the default,
	// could read the whole stream before it).
	r := &Run{Endless: []recovery.Source{a}, Sink: newSink(p, out), MaxSinkLag: 10, Logger: quiet,
		Options: func(recovery.Source) recovery.IngestOptions {
			return recovery.IngestOptions{ReadMessages: 50, InFlight: 2}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runInBackground(ctx, r, p)
	for _, m := range msgs {
		a.msgs <- m
	}
	time.Sleep(300 * time.Millisecond)
	// Measured under load: 100 to 300 read; half the stream is the bound.
	if read := len(msgs) - len(a.msgs); complete(p, 400) || read > len(msgs)/2 {
		t.Fatalf("with the output down, the input was read on: %d of %d messages read", read, len(msgs))
	}
	out.setDown(false)
	waitFor(t, "the stream forwarded once the output is back", func() bool { return complete(p, 400) && r.Sink.Forwarder().Lag() == 0 })
	cancel()
	wait(t, done)
	checkAll(t, p, out)
}

// endSource is a chanSource that reports log ends.
type endSource struct {
	*chanSource
	ends map[int32]int64
}

func (s *endSource) LogEnds() map[int32]int64 { return s.ends }

// wrapped hides its source's methods but Unwrap, as the command line's
// wrappers do.
type wrapped struct{ recovery.Source }

func (w wrapped) Unwrap() recovery.Source { return w.Source }

func TestRunRecordsTheInputsLogEndsForDescribe(t *testing.T) {
	p, _ := openProcessor(t)
	src := &endSource{chanSource: newChanSource("nats:IN"), ends: map[int32]int64{0: 9}}
	ctx, cancel := context.WithCancel(context.Background())
	done := runInBackground(ctx, &Run{Endless: []recovery.Source{wrapped{src}}, RecordEvery: 10 * time.Millisecond, Logger: quiet}, p)
	waitFor(t, "the ends recorded", func() bool { return p.Cursor(EndCursor("nats:IN")) != nil })
	cancel()
	wait(t, done)
	ends, err := DecodeInputEnds(p.Cursor(EndCursor("nats:IN")))
	if err != nil || ends.Ends[0] != 9 || ends.At == 0 {
		t.Errorf("recorded %+v, %v", ends, err)
	}
}

func TestRunReturnsTheErrorOfAnInputThatReportsLogEnds(t *testing.T) {
	p, _ := openProcessor(t)
	src := &endSource{chanSource: newChanSource("nats:IN"), ends: map[int32]int64{0: 9}}
	boom := errors.New("boom")
	src.fail <- boom
	done := runInBackground(context.Background(), &Run{Endless: []recovery.Source{src}, RecordEvery: 10 * time.Millisecond, Logger: quiet}, p)
	if err := wait(t, done); !errors.Is(err, boom) {
		t.Fatalf("Run returned %v, want the input's error", err)
	}
}

func TestTheSinkIsAConsumerThatHoldsRetentionAtWhatTheOutputLacks(t *testing.T) {
	p, _ := openProcessor(t)
	out := &memOutput{}
	a := newChanSource("a")
	msgs := stream(6000)
	sink := newSink(p, out)
	r := &Run{Endless: []recovery.Source{a}, Sink: sink, Logger: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	done := runInBackground(ctx, r, p)
	for _, m := range msgs[:len(msgs)/2] {
		a.msgs <- m
	}
	half := fmt.Sprint(len(msgs) / 2)
	waitFor(t, "the first half forwarded", func() bool {
		return string(p.Cursor("a")) == half && sink.Forwarder().Lag() == 0
	})
	out.setDown(true)
	for _, m := range msgs[len(msgs)/2:] {
		a.msgs <- m
	}
	waitFor(t, "the whole stream committed", func() bool { return complete(p, 6000) })
	acked := sink.Forwarder().Acked()
	waitFor(t, "the sink's position committed", func() bool {
		cs, _ := p.Consumers()
		return len(cs) == 1 && cs[0].Next == acked
	})
	cs, _ := p.Consumers()
	if cs[0].Name != SinkCursor("mem:out") || cs[0].Lag != p.OutputEnd()-acked {
		t.Fatalf("consumers %+v; acked %d of %d", cs, acked, p.OutputEnd()-1)
	}
	res, err := p.GC(context.Background(), recovery.GCOptions{RetainOutput: recovery.RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gc dropped %d output records (%d chunks), keeps from %d; the output has up to %d of %d", res.OutputRecordsDropped, res.OutputChunksDeleted, res.OutputFrom, acked, p.OutputEnd()-1)
	if res.OutputRecordsDropped == 0 {
		t.Fatal("gc dropped nothing: the test shows nothing")
	}
	if res.OutputFrom > acked {
		t.Fatalf("retention dropped records the sink needs: it keeps from %d, the output has up to %d", res.OutputFrom, acked)
	}
	out.setDown(false)
	waitFor(t, "the rest forwarded", func() bool { return sink.Forwarder().Lag() == 0 })
	cancel()
	wait(t, done)
	checkAll(t, p, out)
}

func TestRunValidateRefusesASinkLagWithoutASink(t *testing.T) {
	if err := (&Run{}).Validate(); err != nil {
		t.Fatalf("zero Run: Validate() = %v, want nil", err)
	}
	r := &Run{MaxSinkLag: 10}
	want := "--max-sink-lag applies to a broker output, and there is no --to"
	if err := r.Validate(); !errors.Is(err, cdc.ErrOption) || err.Error() != want {
		t.Fatalf("Validate() = %v, want %q matching cdc.ErrOption", err, want)
	}
	// Run refuses it before it touches the processor (nil here).
	if _, err := r.Run(context.Background(), nil); err == nil || err.Error() != want {
		t.Fatalf("Run = %v, want %q", err, want)
	}
}
