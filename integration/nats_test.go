package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/cdc"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

const (
	inStream   = "CDC_IN"
	inSubject  = "cdc.in"
	outStream  = "CLEAN"
	outSubject = "clean.out"
)

// natsCluster is a 3-node nats-server cluster on loopback, each node
// with JetStream on a file store synced on every write.
type natsCluster struct {
	t       *testing.T
	opts    []*server.Options
	servers []*server.Server
}

// freePorts returns n distinct free loopback ports, holding them all
// open until it has them so that none is handed out twice.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func newNATS(t *testing.T) *natsCluster {
	t.Helper()
	c := &natsCluster{t: t}
	var routes []string
	ports := freePorts(t, 6)
	cports := ports[3:]
	for _, p := range cports {
		routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(p))
	}
	for i := range 3 {
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: t.TempDir(), SyncAlways: true,
			Cluster: server.ClusterOpts{Name: "cdclog", Host: "127.0.0.1", Port: cports[i]},
			Routes:  server.RoutesFromStr(routes[0] + "," + routes[1] + "," + routes[2]),
			NoLog:   true, NoSigs: true,
		})
		c.servers = append(c.servers, nil)
		c.start(i)
	}
	t.Cleanup(func() {
		for _, s := range c.servers {
			if s != nil {
				s.Shutdown()
			}
		}
	})
	return c
}

// start (re)starts node i with its options.
func (c *natsCluster) start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	if err != nil {
		c.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		c.t.Fatalf("node %d not ready", i)
	}
	c.servers[i] = s
}

// kill shuts node down.
func (c *natsCluster) kill(name string) {
	for i, s := range c.servers {
		if s != nil && s.Name() == name {
			s.Shutdown()
			s.WaitForShutdown()
			c.servers[i] = nil
			return
		}
	}
	c.t.Fatalf("no running node %s", name)
}

// addrs returns every node's client address.
func (c *natsCluster) addrs() []string {
	var out []string
	for _, o := range c.opts {
		out = append(out, "127.0.0.1:"+strconv.Itoa(o.Port))
	}
	return out
}

// js connects to the cluster.
func (c *natsCluster) js() (*nats.Conn, njs.JetStream) {
	c.t.Helper()
	var urls string
	for _, a := range c.addrs() {
		urls += "nats://" + a + ","
	}
	nc, err := nats.Connect(urls[:len(urls)-1], nats.MaxReconnects(-1))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	js, err := njs.New(nc)
	if err != nil {
		c.t.Fatal(err)
	}
	return nc, js
}

// createStreams makes the R3 input and output streams, retrying while
// the cluster elects its meta leader.
func (c *natsCluster) createStreams() njs.JetStream {
	c.t.Helper()
	_, js := c.js()
	for _, cfg := range []njs.StreamConfig{
		{Name: inStream, Subjects: []string{inSubject}, Replicas: 3, Storage: njs.FileStorage},
		{Name: outStream, Subjects: []string{outSubject}, Replicas: 3, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true},
	} {
		waitFor(c.t, 30*time.Second, "stream "+cfg.Name, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := js.CreateOrUpdateStream(ctx, cfg)
			return err == nil
		})
	}
	return js
}

func publishNATS(t *testing.T, js njs.JetStream, msgs []cdc.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range msgs {
		for {
			_, err := js.Publish(ctx, inSubject, cdc.AppendJSON(nil, &msgs[i]))
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

// readNATS reads every message on the output subject.
func readNATS(t *testing.T, js njs.JetStream) []outRecord {
	t.Helper()
	return readSubject(t, js, outStream, outSubject)
}

// readSubject reads every message of stream on subject.
func readSubject(t *testing.T, js njs.JetStream, stream, subject string) []outRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	last := st.CachedInfo().State.LastSeq
	var out []outRecord
	for seq := uint64(1); seq <= last; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("get %d: %v", seq, err)
		}
		if m.Subject != subject {
			continue
		}
		var l broker.Last
		l.SetHeader(broker.HeaderSeq, []byte(m.Header.Get(broker.HeaderSeq)))
		out = append(out, outRecord{Seq: l.Seq, DB: m.Header.Get(broker.HeaderDB), Value: m.Data, Where: fmt.Sprintf("%s sequence %d", stream, seq),
			Batch: m.Header.Get("Nats-Batch-Id")})
	}
	return out
}

func natsSource(c *natsCluster, o jetstream.SourceOptions) *jetstream.Source {
	o.Servers, o.Stream, o.Logger = c.addrs(), inStream, quiet
	return jetstream.NewSource(o)
}

func natsOutput(c *natsCluster, sinkID string) *jetstream.Output {
	return jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: c.addrs(), Logger: quiet}, Stream: outStream, Subject: outSubject, SinkID: sinkID, AckTimeout: 5 * time.Second})
}

// streamLeader returns the name of the node leading stream.
func streamLeader(t *testing.T, js njs.JetStream, stream string) string {
	t.Helper()
	var leader string
	waitFor(t, 30*time.Second, "a leader for "+stream, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, stream)
		if err != nil || st.CachedInfo().Cluster == nil {
			return false
		}
		leader = st.CachedInfo().Cluster.Leader
		return leader != ""
	})
	return leader
}

func TestJetStreamToJetStreamExactlyOnceWhenTheOutputLeaderIsKilledAndIngestRestarts(t *testing.T) {
	c := newNATS(t)
	js := c.createStreams()
	const times = 300
	input := mangled(times, 11)
	third := len(input) / 3
	publishNATS(t, js, input[:third])
	path := tempDB(t)

	p, db := openDB(t, path)
	pl := startPipeline(p, db, natsSource(c, jetstream.SourceOptions{}), natsOutput(c, ""))
	waitFor(t, 30*time.Second, "first output on the stream", func() bool { return pl.fw.Acked() > 0 })

	// The node leading the output stream dies; the other two elect a
	// new leader and the sink goes on.
	leader := streamLeader(t, js, outStream)
	c.kill(leader)
	_, js = c.js()
	publishNATS(t, js, input[third:2*third])
	waitForState(t, 120*time.Second, "two thirds ingested and forwarded after the leader was killed", func() bool {
		cur, err := jetstream.DecodeCursor(p.Cursor("nats:" + inStream))
		return err == nil && cur.Next == uint64(2*third+1) && pl.fw.Lag() == 0
	}, func() string {
		cur, err := jetstream.DecodeCursor(p.Cursor("nats:" + inStream))
		return fmt.Sprintf("cursor %+v (%v), want next %d; output end %d, acked %d", cur, err, 2*third+1, p.OutputEnd(), pl.fw.Acked())
	})
	pl.stop(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// Ingest restarts from its cursor.
	publishNATS(t, js, input[2*third:])
	p, _ = openDB(t, path)
	defer p.Close()
	src := &countingSource{Source: natsSource(c, jetstream.SourceOptions{})}
	pl = startPipeline(p, db, src, natsOutput(c, ""))
	deadline := time.Now().Add(120 * time.Second)
	for !(complete(p, times) && pl.fw.Lag() == 0 && pl.fw.Acked() == p.OutputEnd()-1) {
		if time.Now().After(deadline) {
			f, _ := p.Frontier()
			t.Fatalf("timed out: frontier %d of %d, output end %d, acked %d", f, times, p.OutputEnd(), pl.fw.Acked())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pl.stop(t)
	if src.msgs != len(input)-2*third {
		t.Errorf("the restarted source read %d messages, only %d were not committed", src.msgs, len(input)-2*third)
	}
	checkOutput(t, readNATS(t, js), p.OutputEnd(), input)
}

func TestJetStreamRetentionGapStopsWithATypedError(t *testing.T) {
	c := newNATS(t)
	js := c.createStreams()
	input := mangled(60, 12)
	publishNATS(t, js, input[:30])
	p, _ := openDB(t, tempDB(t))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest(ctx, p, natsSource(c, jetstream.SourceOptions{})) }()
	waitFor(t, 30*time.Second, "30 messages ingested", func() bool {
		cur, err := jetstream.DecodeCursor(p.Cursor("nats:" + inStream))
		return err == nil && cur.Next == 31
	})
	cancel()
	<-done
	publishNATS(t, js, input[30:])
	st, err := js.Stream(context.Background(), inStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), njs.WithPurgeSequence(40)); err != nil {
		t.Fatal(err)
	}
	err = ingest(context.Background(), p, natsSource(c, jetstream.SourceOptions{}))
	var perr *broker.PositionError
	if !errors.Is(err, broker.ErrGap) || !errors.As(err, &perr) || perr.Position != 31 || perr.Start != 40 {
		t.Fatalf("got %v, want a gap: position 31, first sequence 40", err)
	}
}

func TestJetStreamRecreatedStreamIsRefusedAsGoingBackwards(t *testing.T) {
	c := newNATS(t)
	js := c.createStreams()
	publishNATS(t, js, mangled(20, 13))
	p, _ := openDB(t, tempDB(t))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest(ctx, p, natsSource(c, jetstream.SourceOptions{})) }()
	waitFor(t, 30*time.Second, "input ingested", func() bool { return p.Cursor("nats:"+inStream) != nil })
	cancel()
	<-done
	if err := js.DeleteStream(context.Background(), inStream); err != nil {
		t.Fatal(err)
	}
	c.createStreams()
	err := ingest(context.Background(), p, natsSource(c, jetstream.SourceOptions{}))
	if !errors.Is(err, broker.ErrBackwards) {
		t.Fatalf("got %v, want ErrBackwards", err)
	}
}

func TestJetStreamSecondWriterOnOneSubjectIsRefused(t *testing.T) {
	c := newNATS(t)
	js := c.createStreams()
	input := mangled(300, 14)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input[:len(input)/2], nil); err != nil {
		t.Fatal(err)
	}
	opts := broker.ForwarderOptions{DatabaseID: db, BatchRecords: 16, RetryMin: 20 * time.Millisecond, Logger: quiet}
	a := broker.NewForwarder(p, natsOutput(c, ""), opts)
	b := broker.NewForwarder(p, natsOutput(c, ""), opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- a.Run(ctx) }()
	waitFor(t, 30*time.Second, "the first writer's records", func() bool { return a.Acked() > 0 })
	go func() { errs <- b.Run(ctx) }()
	if _, err := p.Append(context.Background(), input[len(input)/2:], nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, broker.ErrFenced) {
			t.Fatalf("a writer stopped with %v, want ErrFenced", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("neither writer was refused")
	}
	waitFor(t, 60*time.Second, "the remaining writer to catch up", func() bool {
		return max(a.Acked(), b.Acked()) == p.OutputEnd()-1
	})
	cancel()
	<-errs
	checkOutput(t, readNATS(t, js), p.OutputEnd(), input)
}

func TestJetStreamOutputSharingItsStreamWithAnotherSubjectStillGetsEveryRecordOnce(t *testing.T) {
	c := newNATS(t)
	_, js := c.js()
	cfg := njs.StreamConfig{Name: "MIXED", Subjects: []string{"mixed.out", "mixed.noise"}, Replicas: 1, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true}
	waitFor(t, 30*time.Second, "stream MIXED", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(ctx, cfg)
		return err == nil
	})
	input := mangled(200, 15)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input, nil); err != nil {
		t.Fatal(err)
	}
	// Another program publishes to the stream's other subject meanwhile.
	// Each publish expects the subject's last sequence, which the other
	// subject's messages do not change.
	stop := make(chan struct{})
	noise := make(chan int)
	go func() {
		n := 0
		defer func() { noise <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := js.Publish(context.Background(), "mixed.noise", []byte("noise")); err == nil {
				n++
			}
		}
	}()
	out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: c.addrs(), Logger: quiet}, Stream: "MIXED", Subject: "mixed.out", AckTimeout: 5 * time.Second})
	fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, BatchRecords: 64, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	err := fw.Drain(ctx)
	close(stop)
	if n := <-noise; n == 0 {
		t.Error("no noise was published: the test did not test sharing")
	}
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, readSubject(t, js, "MIXED", "mixed.out"), p.OutputEnd(), input)
}
