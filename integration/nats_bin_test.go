package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/cdc"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// natsTarget is the JetStream cluster a binary test runs against: the
// in-process 3-node cluster, whose nodes the test can kill and restart;
// or, with CDCLOG_E2E_NATS=HOST:PORT[,...] (scripts/broker-e2e --nats),
// servers the user supplies, on streams with a unique prefix, where node
// kills are skipped.
type natsTarget struct {
	servers      []string
	in, inSubj   string
	out, outSubj string
	c            *natsCluster // nil for external servers
	js           njs.JetStream
	replicas     int // of the streams created on external servers
	connect      func() njs.JetStream
}

func newNATSTarget(t *testing.T) *natsTarget {
	t.Helper()
	if ext := os.Getenv("CDCLOG_E2E_NATS"); ext != "" {
		return externalNATS(t, ext)
	}
	c := newNATS(t)
	k := &natsTarget{servers: c.addrs(), in: inStream, inSubj: inSubject, out: outStream, outSubj: outSubject, c: c}
	k.connect = func() njs.JetStream { _, js := c.js(); return js }
	k.js = c.createStreams()
	return k
}

// externalNATS creates the streams of one test on the user's servers (R3,
// or R1 where the servers are too few), and deletes them at the end unless
// CDCLOG_E2E_KEEP is set.
func externalNATS(t *testing.T, ext string) *natsTarget {
	t.Helper()
	var servers []string
	for _, s := range strings.Split(ext, ",") {
		s = strings.TrimPrefix(s, "nats://")
		if !strings.Contains(s, ":") {
			s += ":4222"
		}
		servers = append(servers, s)
	}
	id := make([]byte, 4)
	rand.Read(id)
	tag := hex.EncodeToString(id)
	k := &natsTarget{servers: servers,
		in: "CDCLOG_E2E_" + tag + "_IN", inSubj: "cdclog-e2e." + tag + ".in",
		out: "CDCLOG_E2E_" + tag + "_OUT", outSubj: "cdclog-e2e." + tag + ".out"}
	k.connect = func() njs.JetStream {
		nc, err := nats.Connect("nats://"+strings.Join(servers, ",nats://"), nats.MaxReconnects(-1))
		if err != nil {
			t.Fatalf("external NATS %v: %v", servers, err)
		}
		t.Cleanup(nc.Close)
		js, err := njs.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	k.js = k.connect()
	ctx := ctxTimeout(t, time.Minute)
	for _, cfg := range []njs.StreamConfig{
		{Name: k.in, Subjects: []string{k.inSubj}, Storage: njs.FileStorage},
		{Name: k.out, Subjects: []string{k.outSubj}, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true},
	} {
		var err error
		for _, r := range []int{3, 1} {
			cfg.Replicas = r
			if _, err = k.js.CreateStream(ctx, cfg); err == nil {
				k.replicas = r
				break
			}
		}
		if err != nil {
			t.Fatalf("create stream %s: %v", cfg.Name, err)
		}
		name := cfg.Name
		t.Cleanup(func() {
			if os.Getenv("CDCLOG_E2E_KEEP") == "" {
				k.js.DeleteStream(context.Background(), name)
			}
		})
	}
	t.Logf("external NATS %v: streams %s and %s, %d replicas", servers, k.in, k.out, k.replicas)
	return k
}

func (k *natsTarget) url(stream, subject string) string {
	u := "nats://" + strings.Join(k.servers, ",") + "/" + stream
	if subject != "" {
		u += "/" + subject
	}
	return u
}

func (k *natsTarget) publish(t *testing.T, msgs []cdc.Message) {
	t.Helper()
	ctx := ctxTimeout(t, 2*time.Minute)
	for i := range msgs {
		for {
			_, err := k.js.Publish(ctx, k.inSubj, cdc.AppendJSON(nil, &msgs[i]))
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("publish: %v", err)
			}
			time.Sleep(50 * time.Millisecond) // a leader election
		}
	}
}

func (k *natsTarget) read(t *testing.T) []outRecord { return readSubject(t, k.js, k.out, k.outSubj) }

func (k *natsTarget) ingestArgs(db string, extra ...string) []string {
	return append([]string{"ingest", "--db", db, "--from", k.url(k.in, ""), "--to", k.url(k.out, k.outSubj),
		"--sink-timeout", "5s", "--drain-timeout", "30s"}, extra...)
}

// restart starts again the node that kill shut down.
func (c *natsCluster) restart(name string) {
	c.t.Helper()
	for i, o := range c.opts {
		if o.ServerName == name {
			c.start(i)
			return
		}
	}
	c.t.Fatalf("no node %s", name)
}

func TestCdclogJetStreamToJetStreamExactlyOnceAcrossKillsAndTheOutputLeadersDeath(t *testing.T) {
	k := newNATSTarget(t)
	const times = 600
	input := mangled(times, 31)
	parts := chunks(input, 4)
	db := tempDB(t)
	sched := newKillSchedule(t, 1500*time.Millisecond)
	n := max(kills(t, 8), len(parts))
	var seen []string
	var dead string
	for i := range n {
		if i < len(parts) {
			k.publish(t, parts[i])
		}
		p := startCdclog(t, k.ingestArgs(db)...)
		switch {
		case i == 2 && k.c != nil: // the node leading the output stream dies while cdclog forwards
			waitVerified(t, p, "cdclog")
			dead = streamLeader(t, k.js, k.out)
			k.c.kill(dead)
			k.js = k.connect()
			killAfter(t, p, 2*time.Second+sched.next())
		case i == 5 && dead != "": // and comes back
			k.c.restart(dead)
			killAfter(t, p, sched.next())
		case i%2 == 0:
			killAfter(t, p, sched.next())
		default:
			killAfterVerified(t, p, sched.next()/2)
		}
		out := k.read(t)
		seen = append(seen, fmt.Sprintf("%d records to time %d", len(out), outputFrontier(out)))
	}
	t.Logf("the output after each kill: %s", strings.Join(seen, "; "))
	for i := n; i < len(parts); i++ {
		k.publish(t, parts[i])
	}
	p := startCdclog(t, k.ingestArgs(db)...)
	waitVerified(t, p, "the last run")
	waitOutput(t, 3*time.Minute, times, p, func() []outRecord { return k.read(t) })
	if e := p.stop(time.Minute); e.code != 0 {
		t.Fatalf("the last run, stopped by SIGTERM: %v", e)
	}
	end, cursors := storedEnd(t, db)
	checkOutput(t, k.read(t), end, input)
	if cur, err := jetstream.DecodeCursor(cursors["nats:"+k.in]); err != nil || cur.Next != uint64(len(input)+1) {
		t.Errorf("cursor %+v, %v: want next sequence %d", cur, err, len(input)+1)
	}
}

func TestCdclogJetStreamRetentionGapAndARecreatedStreamExitOne(t *testing.T) {
	k := newNATSTarget(t)
	input := mangled(60, 32)
	k.publish(t, input[:30])
	db := tempDB(t)
	args := []string{"ingest", "--db", db, "--from", k.url(k.in, ""), "--out", db + ".jsonl"}
	runUntil(t, db, args, "30 messages committed", func(c map[string][]byte) bool {
		cur, err := jetstream.DecodeCursor(c["nats:"+k.in])
		return err == nil && cur.Next == 31
	})
	k.publish(t, input[30:])
	st, err := k.js.Stream(context.Background(), k.in)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), njs.WithPurgeSequence(40)); err != nil {
		t.Fatal(err)
	}
	e := startCdclog(t, args...).wait(time.Minute)
	if e.code != 1 || !strings.Contains(e.stderr, "input messages were deleted before they were read") || !strings.Contains(e.stderr, "committed position 31") {
		t.Fatalf("want exit 1 for the gap from sequence 31; got %v", e)
	}
	t.Logf("cdclog says: %s", lastLine(e.stderr))

	// The stream deleted and created anew: it went backwards.
	if err := k.js.DeleteStream(context.Background(), k.in); err != nil {
		t.Fatal(err)
	}
	cfg := njs.StreamConfig{Name: k.in, Subjects: []string{k.inSubj}, Storage: njs.FileStorage, Replicas: max(k.replicas, 1)}
	if k.c != nil {
		cfg.Replicas = 3
	}
	if _, err := k.js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	k.publish(t, input)
	e = startCdclog(t, args...).wait(time.Minute)
	if e.code != 1 || !strings.Contains(e.stderr, "input went backwards") || !strings.Contains(e.stderr, "created anew") {
		t.Fatalf("want exit 1 for a re-created stream; got %v", e)
	}
	t.Logf("cdclog says: %s", lastLine(e.stderr))
}

func TestCdclogJetStreamSecondInstanceOnOneSubjectOneOfThemExitsFenced(t *testing.T) {
	k := newNATSTarget(t)
	const times = 300
	input := mangled(times, 33)
	half := len(input) / 2
	k.publish(t, input[:half])
	db := tempDB(t)
	copyDB := forwardThenCopy(t, db, k.ingestArgs(db), func() []outRecord { return k.read(t) })
	a := startCdclog(t, k.ingestArgs(db)...)
	b := startCdclog(t, k.ingestArgs(copyDB)...)
	waitVerified(t, a, "a writer")
	waitVerified(t, b, "a writer")
	k.publish(t, input[half:])
	// JetStream has no producer fencing: whichever publishes second is
	// refused by the expected-sequence check and stops.
	var loser, winner *proc
	deadline := time.Now().Add(2 * time.Minute)
	for loser == nil {
		switch {
		case !a.running():
			loser, winner = a, b
		case !b.running():
			loser, winner = b, a
		case time.Now().After(deadline):
			t.Fatal("neither writer was refused")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := loser.result(); e.code != 1 || !strings.Contains(e.stderr, "fenced") {
		t.Fatalf("the refused writer: want exit 1, fenced; got %v", e)
	}
	waitOutput(t, 2*time.Minute, times, winner, func() []outRecord { return k.read(t) })
	if e := winner.stop(time.Minute); e.code != 0 {
		t.Fatalf("the remaining writer: %v", e)
	}
	winnerDB := db
	if winner == b {
		winnerDB = copyDB
	}
	end, _ := storedEnd(t, winnerDB)
	checkOutput(t, k.read(t), end, input)
}
