package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// The JetStream output's atomic batches under the faults they must
// survive: a writer that published between a batch's start and its
// commit, a commit whose acknowledgement is lost, a connection cut before
// the commit, and a stream that does not allow atomic publish.

// createOutput makes an R3 output stream with one subject.
func createOutput(t *testing.T, js njs.JetStream, name, subject string, atomic bool) njs.StreamConfig {
	t.Helper()
	cfg := njs.StreamConfig{Name: name, Subjects: []string{subject}, Replicas: 3, Storage: njs.FileStorage,
		DenyDelete: true, DenyPurge: true, AllowAtomicPublish: atomic}
	waitFor(t, 30*time.Second, "stream "+name, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(ctx, cfg)
		return err == nil
	})
	return cfg
}

// outgoing returns records from to to, with values naming them.
func outgoing(from, to uint64) []broker.Outgoing {
	var out []broker.Outgoing
	for s := from; s <= to; s++ {
		out = append(out, broker.Outgoing{Seq: s, Value: fmt.Appendf(nil, "record %d", s)})
	}
	return out
}

// batches counts the distinct atomic batches of out, and the records
// published alone.
func batches(out []outRecord) (batched map[string]int, alone int) {
	batched = map[string]int{}
	for _, r := range out {
		if r.Batch == "" {
			alone++
			continue
		}
		batched[r.Batch]++
	}
	return batched, alone
}

func TestJetStreamBatchIsRefusedWholeWhenAnotherWriterPublishedBeforeItsCommit(t *testing.T) {
	c := newNATS(t)
	js := c.createStreams()
	ctx := ctxTimeout(t, 2*time.Minute)
	// Another program publishes to the subject after the second batch's
	// first messages went out, just before its commit does.
	d := &faultDialer{at: 2, fault: beforeWrite, hook: func() {
		if _, err := js.Publish(ctx, outSubject, []byte("foreign")); err != nil {
			t.Errorf("the other writer's publish: %v", err)
		}
	}}
	out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: c.addrs(), Logger: quiet, Opts: []nats.Option{d.option()}},
		Stream: outStream, Subject: outSubject, AckTimeout: 5 * time.Second})
	sess, last, err := out.Open(ctx, broker.Stamp{DB: "db", Writer: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if last.Found {
		t.Fatalf("a new stream's subject has a last message: %+v", last)
	}
	if err := sess.Write(ctx, outgoing(1, 10)); err != nil {
		t.Fatalf("the first batch: %v", err)
	}
	err = sess.Write(ctx, outgoing(11, 20))
	if !d.fired.Load() {
		t.Fatal("the other writer never published: the test did not test a refusal")
	}
	if !errors.Is(err, jetstream.ErrWrongLast) {
		t.Fatalf("the second batch: got %v, want ErrWrongLast", err)
	}
	got := readNATS(t, js)
	var seqs []string
	for _, r := range got {
		seqs = append(seqs, fmt.Sprint(r.Seq))
	}
	if want := "1 2 3 4 5 6 7 8 9 10 0"; strings.Join(seqs, " ") != want {
		t.Fatalf("the subject holds records %v, want %s (the first batch, then the other writer's message)", seqs, want)
	}
	if b, alone := batches(got[:10]); len(b) != 1 || alone != 0 {
		t.Errorf("the first 10 records came in batches %v and %d alone, want one batch", b, alone)
	}

	// The writer's next session finds the other writer's message.
	sess2, last, err := out.Open(ctx, broker.Stamp{DB: "db", Writer: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	if !last.Found || last.HasSeq || string(last.Value) != "foreign" {
		t.Fatalf("the read-back after the refusal: %+v, want the other writer's message", last)
	}
}

func TestJetStreamBatchWhoseCommitFailedIsOnTheOutputOnceAfterTheNextSession(t *testing.T) {
	c := newNATS(t)
	_, js := c.js()
	input := mangled(200, 16)
	for i, tc := range []struct {
		name  string
		fault commitFault
		// landed: the batch is on the stream, so the next session
		// resumes after it rather than at its first record.
		landed bool
	}{
		{"the commit is stored and its acknowledgement lost", deafAfter, true},
		{"the connection is cut before the commit is sent", cutBefore, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, subject := fmt.Sprintf("FAULT%d", i), fmt.Sprintf("fault%d.out", i)
			createOutput(t, js, stream, subject, true)
			p, db := openDB(t, tempDB(t))
			defer p.Close()
			if _, err := p.Append(context.Background(), input, nil); err != nil {
				t.Fatal(err)
			}
			log, logs := logBuffer()
			d := &faultDialer{at: 3, fault: tc.fault}
			out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: c.addrs(), Logger: log, Opts: []nats.Option{d.option()}},
				Stream: stream, Subject: subject, AckTimeout: 2 * time.Second})
			fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, BatchRecords: 32, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, Logger: log})
			if err := fw.Drain(ctxTimeout(t, 2*time.Minute)); err != nil {
				t.Fatalf("drain: %v\n%s", err, logs)
			}
			if !d.fired.Load() {
				t.Fatal("the fault never fired: the test did not test it")
			}
			first, last, resume := faultedBatch(t, logs.String())
			if want := map[bool]uint64{true: last + 1, false: first}[tc.landed]; resume != want {
				t.Errorf("the batch of records %d to %d failed, and the next session resumed at %d, want %d", first, last, resume, want)
			}
			got := readSubject(t, js, stream, subject)
			checkOutput(t, got, p.OutputEnd(), input)
			if b, alone := batches(got); alone != 0 || len(b) < 3 {
				t.Errorf("the output came in %d batches and %d records alone, want only batches, at least 3", len(b), alone)
			}
		})
	}
}

// faultedBatch finds in a forwarder's log the first batch that failed
// and where the session after it resumed.
func faultedBatch(t *testing.T, logs string) (first, last, resume uint64) {
	t.Helper()
	failed := regexp.MustCompile(`starting a new session.* batch of records (\d+) to (\d+)`).FindStringSubmatch(logs)
	next := regexp.MustCompile(`output sink: new session.* resume_at=(\d+)`).FindStringSubmatch(logs)
	if failed == nil || next == nil {
		t.Fatalf("no failed batch and new session in the log:\n%s", logs)
	}
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return num(failed[1]), num(failed[2]), num(next[1])
}

func TestJetStreamOutputWithoutAtomicPublishFallsBackToSinglePublishesAndSaysHowToEnableIt(t *testing.T) {
	c := newNATS(t)
	_, js := c.js()
	cfg := createOutput(t, js, "SINGLE", "single.out", false)
	input := mangled(100, 17)
	half := len(input) / 2
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input[:half], nil); err != nil {
		t.Fatal(err)
	}
	log, logs := logBuffer()
	out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: c.addrs(), Logger: log}, Stream: "SINGLE", AckTimeout: 5 * time.Second})
	fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, Logger: log})
	ctx := ctxTimeout(t, 2*time.Minute)
	if err := fw.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"does not allow atomic batch publish", "nats stream edit SINGLE --allow-batch", "allow_atomic: true"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
	before := readSubject(t, js, "SINGLE", "single.out")
	if b, _ := batches(before); len(b) != 0 {
		t.Errorf("records were published in %d batches on a stream that does not allow them", len(b))
	}

	// The stream is edited to allow atomic publish: the next session
	// publishes in batches.
	cfg.AllowAtomicPublish = true
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(context.Background(), input[half:], nil); err != nil {
		t.Fatal(err)
	}
	if err := fw.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "publishing in atomic batches") {
		t.Errorf("the log does not say the output switched to batches:\n%s", logs)
	}
	got := readSubject(t, js, "SINGLE", "single.out")
	checkOutput(t, got, p.OutputEnd(), input)
	if b, alone := batches(got[len(before):]); len(b) == 0 || alone != 0 {
		t.Errorf("after the edit: %d batches and %d records alone, want only batches", len(b), alone)
	}
}

// singleNATS starts one nats-server with JetStream, synced on every
// write, its options changed by opts, and returns its address and a
// JetStream context on it.
func singleNATS(t *testing.T, opts func(*server.Options)) (string, njs.JetStream) {
	t.Helper()
	o := &server.Options{ServerName: "single", Host: "127.0.0.1", Port: freePorts(t, 1)[0], JetStream: true,
		StoreDir: t.TempDir(), SyncAlways: true, NoLog: true, NoSigs: true}
	if opts != nil {
		opts(o)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", o.Port)
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return addr, js
}

func TestJetStreamOutputLowersItsBatchesToTheServersMaxBatchSize(t *testing.T) {
	const limit = 50
	addr, js := singleNATS(t, func(o *server.Options) { o.JetStreamLimits.MaxBatchSize = limit })
	cfg := njs.StreamConfig{Name: "SMALL", Subjects: []string{"small.out"}, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true}
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	input := mangled(100, 18)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input, nil); err != nil {
		t.Fatal(err)
	}
	log, logs := logBuffer()
	out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: []string{addr}, Logger: log}, Stream: "SMALL", AckTimeout: 5 * time.Second})
	fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, BatchRecords: 256, RetryMin: 10 * time.Millisecond, Logger: log})
	if err := fw.Drain(ctxTimeout(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "max_batch_size is lower") || !strings.Contains(logs.String(), fmt.Sprintf("batch_messages=%d", limit)) {
		t.Errorf("the log does not say the batches were lowered to %d:\n%s", limit, logs)
	}
	got := readSubject(t, js, "SMALL", "small.out")
	checkOutput(t, got, p.OutputEnd(), input)
	b, alone := batches(got)
	for id, n := range b {
		if n > limit {
			t.Errorf("batch %s holds %d records, the server's limit is %d", id, n, limit)
		}
	}
	if alone != 0 || len(b) < len(got)/limit {
		t.Errorf("%d batches and %d records alone for %d records", len(b), alone, len(got))
	}
}

func TestJetStreamOutputRefusesAStreamThatDoesNotAcknowledge(t *testing.T) {
	addr, js := singleNATS(t, nil)
	cfg := njs.StreamConfig{Name: "NOACK", Subjects: []string{"noack.out"}, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true, NoAck: true}
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), mangled(10, 19), nil); err != nil {
		t.Fatal(err)
	}
	out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: []string{addr}, Logger: quiet}, Stream: "NOACK", AckTimeout: 5 * time.Second})
	err := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, Logger: quiet}).Drain(ctxTimeout(t, time.Minute))
	if !errors.Is(err, broker.ErrOutputConfig) || !strings.Contains(err.Error(), "no_ack") {
		t.Fatalf("got %v, want ErrOutputConfig naming no_ack", err)
	}
}
