// Command brokerbench measures cdclog ingest through brokers side by side
// with file-to-file ingest on the same stream: messages per second from a
// Kafka topic (franz-go's in-process kfake cluster) to a file and to a
// Kafka topic, and the same for NATS JetStream (an in-process nats-server
// cluster). scripts/broker-bench builds cdclog and runs it; see there.
//
// Every broker runs in this process, on the same machine as cdclog, so
// the figures include the brokers' own work. The input topic has one
// partition, so that the output is the file-to-file output byte for byte,
// which brokerbench checks for the runs to a file. A run's time is from
// cdclog's start to the output holding every record.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

type bench struct {
	bin, dir  string
	msgs      []cdc.Message
	input     string
	want      []byte // the file-to-file output
	records   int
	fileSecs  float64
	natsNodes int
	sync      bool
	runs      int
}

func main() {
	b := &bench{}
	times := flag.Uint64("times", 20000, "times of the generated stream (about 4.5 messages each)")
	flag.StringVar(&b.bin, "cdclog", "", "the cdclog binary (required)")
	flag.StringVar(&b.dir, "dir", os.TempDir(), "working directory (a real disk: fsync is free on tmpfs)")
	flag.IntVar(&b.natsNodes, "nats-nodes", 3, "nodes of the NATS cluster (its streams have as many replicas, at most 3)")
	flag.BoolVar(&b.sync, "nats-sync", true, "nats-server syncs every write (sync_interval: always), as docs/brokers.md asks")
	flag.IntVar(&b.runs, "runs", 1, "runs of each measurement; the best (fewest seconds) is shown")
	skip := flag.String("skip", "", "comma-separated runs to skip: kafka, nats, nats-out (nats -> nats only)")
	flag.Parse()
	if b.bin == "" {
		log.Fatal("brokerbench: --cdclog is required")
	}
	log.SetFlags(0)
	log.SetPrefix("brokerbench: ")
	b.generate(*times)
	b.fileToFile()
	rows := [][]string{{"file -> file", fmt.Sprint(len(b.msgs)), secs(b.fileSecs), rate(len(b.msgs), b.fileSecs), "1.00x", "baseline"}}
	skipped := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		skipped[strings.TrimSpace(s)] = true
	}
	if !skipped["kafka"] {
		rows = append(rows, b.kafka()...)
	}
	if !skipped["nats"] {
		rows = append(rows, b.nats(!skipped["nats-out"])...)
	}
	fmt.Printf("\n%d messages (%d times), %d output records; input topic of 1 partition\n\n", len(b.msgs), *times, b.records)
	fmt.Printf("| run | messages | seconds | messages/s | time vs file -> file | note |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s |\n", strings.Join(r, " | "))
	}
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) }
func rate(n int, s float64) string {
	return strconv.FormatFloat(float64(n)/s, 'f', 0, 64)
}

func (b *bench) row(name string, s float64, note string) []string {
	return []string{name, fmt.Sprint(len(b.msgs)), secs(s), rate(len(b.msgs), s), fmt.Sprintf("%.2fx", s/b.fileSecs), note}
}

// generate writes the mangled stream, as `cdclog gen | cdclog mangle`.
func (b *bench) generate(times uint64) {
	b.input = filepath.Join(b.dir, "in.jsonl")
	f, err := os.Create(b.input)
	check(err)
	w := bufio.NewWriter(f)
	for m := range streamgen.Mangle(streamgen.Gen(streamgen.GenOptions{Seed: 1, Times: times}), streamgen.MangleOptions{Seed: 2}) {
		b.msgs = append(b.msgs, m)
		w.Write(cdc.AppendJSON(nil, &m))
		w.WriteByte('\n')
	}
	check(w.Flush())
	check(f.Close())
}

func (b *bench) fileToFile() {
	b.fileSecs = b.best(func(r int) float64 {
		out, db := b.fresh("file.out", r), b.fresh("file.db", r)
		start := time.Now()
		cmd := exec.Command(b.bin, "--quiet", "ingest", "--db", db, "--out", out, b.input)
		if o, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("file -> file: %v\n%s", err, o)
		}
		s := time.Since(start).Seconds()
		var err error
		b.want, err = os.ReadFile(out)
		check(err)
		b.records = bytes.Count(b.want, []byte("\n"))
		log.Printf("file -> file: %.2fs", s)
		return s
	})
}

// best returns the fewest seconds of b.runs runs of run.
func (b *bench) best(run func(r int) float64) float64 {
	s := run(0)
	for r := 1; r < b.runs; r++ {
		s = min(s, run(r))
	}
	return s
}

// fresh returns a path for run r's file name, removing what an earlier
// bench left there.
func (b *bench) fresh(name string, r int) string {
	p := filepath.Join(b.dir, fmt.Sprintf("%d-%s", r, name))
	check(os.RemoveAll(p))
	return p
}

// timed runs cdclog ingest with args until done holds (polled every
// 20 ms), then stops it with SIGTERM, and returns the seconds from its
// start to done.
func (b *bench) timed(name string, args []string, done func() bool) float64 {
	var stderr bytes.Buffer
	cmd := exec.Command(b.bin, append([]string{"--log-level", "warn", "ingest"}, args...)...)
	cmd.Stderr = &stderr
	start := time.Now()
	check(cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for !done() {
		select {
		case err := <-exited:
			log.Fatalf("%s: cdclog exited: %v\n%s", name, err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > 30*time.Minute {
			log.Fatalf("%s: not done after 30 minutes", name)
		}
	}
	s := time.Since(start).Seconds()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		log.Fatalf("%s: cdclog after SIGTERM: %v\n%s", name, err, stderr.String())
	}
	log.Printf("%s: %.2fs", name, s)
	return s
}

// fileDone reports whether the output file holds the whole output, and
// checks that it is the file-to-file output then.
func (b *bench) fileDone(name, path string) func() bool {
	return func() bool {
		if fi, err := os.Stat(path); err != nil || fi.Size() < int64(len(b.want)) {
			return false
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, b.want) {
			log.Fatalf("%s: the output differs from file -> file's", name)
		}
		return true
	}
}

func (b *bench) kafka() [][]string {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(1, "in"))
	check(err)
	defer c.Close()
	addrs := c.ListenAddrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("in"), kgo.ProducerLinger(5*time.Millisecond))
	check(err)
	recs := make([]*kgo.Record, len(b.msgs))
	for i := range b.msgs {
		recs[i] = &kgo.Record{Value: cdc.AppendJSON(nil, &b.msgs[i])}
	}
	check(cl.ProduceSync(context.Background(), recs...).FirstErr())
	cl.Close()
	url := "kafka://" + strings.Join(addrs, ",") + "/"
	s1 := b.best(func(r int) float64 {
		toFile := b.fresh("kafka.out", r)
		return b.timed("kafka -> file", []string{"--db", b.fresh("kafka-file.db", r), "--from", url + "in", "--out", toFile}, b.fileDone("kafka -> file", toFile))
	})
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	check(err)
	defer admCl.Close()
	s2 := b.best(func(r int) float64 {
		out := fmt.Sprintf("out-%d", r) // each run's database writes a topic of its own
		_, err := kadm.NewClient(admCl).CreateTopic(context.Background(), 1, 3, nil, out)
		check(err)
		return b.timed("kafka -> kafka", []string{"--db", b.fresh("kafka-kafka.db", r), "--from", url + "in", "--to", url + out}, b.kafkaDone(addrs, out))
	})
	return [][]string{
		b.row("kafka -> file", s1, "kfake, 3 brokers"),
		b.row("kafka -> kafka", s2, "transactional output, read_committed reader"),
	}
}

// kafkaDone counts the records a read_committed reader of the output sees.
func (b *bench) kafkaDone(addrs []string, topic string) func() bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	check(err)
	n := 0
	return func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		n += cl.PollFetches(ctx).NumRecords()
		if n >= b.records {
			cl.Close()
			return true
		}
		return false
	}
}

func (b *bench) nats(out bool) [][]string {
	nodes := startNATS(b.natsNodes, b.dir, b.sync)
	defer func() {
		for _, s := range nodes {
			s.Shutdown()
		}
	}()
	var urls []string
	for _, s := range nodes {
		urls = append(urls, s.ClientURL())
	}
	nc, err := nats.Connect(strings.Join(urls, ","))
	check(err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	check(err)
	ctx := context.Background()
	r := min(b.natsNodes, 3)
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"cdc.in"}, Replicas: r, Storage: jetstream.FileStorage},
	} {
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err = js.CreateStream(ctx, cfg); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // the meta leader's election
		}
		check(err)
	}
	for i := range b.msgs {
		if _, err := js.PublishAsync("cdc.in", cdc.AppendJSON(nil, &b.msgs[i])); err != nil {
			log.Fatal(err)
		}
		if i%1000 == 999 { // keep the window below the client's limit
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	var hosts []string
	for _, u := range urls {
		hosts = append(hosts, strings.TrimPrefix(u, "nats://"))
	}
	url := "nats://" + strings.Join(hosts, ",") + "/"
	s1 := b.best(func(run int) float64 {
		toFile := b.fresh("nats.out", run)
		return b.timed("nats -> file", []string{"--db", b.fresh("nats-file.db", run), "--from", url + "IN", "--out", toFile}, b.fileDone("nats -> file", toFile))
	})
	note := fmt.Sprintf("nats-server, %d nodes, R%d file streams", b.natsNodes, r)
	if b.sync {
		note += ", sync always"
	}
	rows := [][]string{b.row("nats -> file", s1, note)}
	if !out {
		return rows
	}
	s2 := b.best(func(run int) float64 {
		name := fmt.Sprintf("OUT%d", run) // each run's database writes a stream of its own
		subject := fmt.Sprintf("clean.out%d", run)
		out, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Replicas: r, Storage: jetstream.FileStorage, DenyDelete: true, DenyPurge: true})
		check(err)
		return b.timed("nats -> nats", []string{"--db", b.fresh("nats-nats.db", run), "--from", url + "IN", "--to", url + name + "/" + subject}, func() bool {
			info, err := out.Info(ctx)
			return err == nil && info.State.Msgs >= uint64(b.records)
		})
	})
	return append(rows, b.row("nats -> nats", s2, note+"; one publish per record"))
}

// startNATS starts a cluster of n nodes with JetStream on loopback.
func startNATS(n int, dir string, sync bool) []*server.Server {
	ports := freePorts(2 * n)
	var routes []string
	for _, p := range ports[n:] {
		routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(p))
	}
	var out []*server.Server
	for i := range n {
		o := &server.Options{ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("nats%d", i)), SyncAlways: sync, NoLog: true, NoSigs: true}
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: ports[n+i]}
			o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		}
		s, err := server.NewServer(o)
		check(err)
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			log.Fatalf("nats node %d not ready", i)
		}
		out = append(out, s)
	}
	return out
}

func freePorts(n int) []int {
	var ports []int
	var lns []io.Closer
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range lns {
		l.Close()
	}
	return ports
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
