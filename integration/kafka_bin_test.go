package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/cdc"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaTarget is the Kafka cluster a binary test runs against: an
// in-process kfake cluster of 3 brokers, on which the test can also move
// leaders, restart brokers and inject faults; or, with
// CDCLOG_E2E_KAFKA=HOST:PORT[,...] (scripts/broker-e2e --kafka), a cluster
// the user supplies, on topics with a unique prefix, where those faults
// are skipped.
type kafkaTarget struct {
	addrs   []string
	in, out string
	kf      *kfake.Cluster // nil for an external cluster
	tr      *conns
}

func newKafkaTarget(t *testing.T) *kafkaTarget {
	t.Helper()
	if ext := os.Getenv("CDCLOG_E2E_KAFKA"); ext != "" {
		return externalKafka(t, strings.Split(ext, ","))
	}
	tr := &conns{}
	c := newKafka(t, kfake.ListenFn(tr.listen))
	return &kafkaTarget{addrs: c.ListenAddrs(), in: inTopic, out: outTopic, kf: c, tr: tr}
}

// externalKafka creates the input (4 partitions) and output (1) topics
// of one test on the user's cluster, and deletes them at its end unless
// CDCLOG_E2E_KEEP is set.
func externalKafka(t *testing.T, addrs []string) *kafkaTarget {
	t.Helper()
	id := make([]byte, 4)
	rand.Read(id)
	prefix := "cdclog-e2e-" + hex.EncodeToString(id) + "-"
	k := &kafkaTarget{addrs: addrs, in: prefix + "in", out: prefix + "out"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	ctx := ctxTimeout(t, time.Minute)
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		t.Fatalf("external Kafka %v: %v", addrs, err)
	}
	rf := int16(min(3, len(brokers)))
	cfg := map[string]*string{}
	if rf == 3 {
		two := "2"
		cfg["min.insync.replicas"] = &two
	}
	for topic, parts := range map[string]int32{k.in: 4, k.out: 1} {
		if _, err := adm.CreateTopic(ctx, parts, rf, cfg, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	t.Logf("external Kafka %v: topics %s and %s, replication factor %d", addrs, k.in, k.out, rf)
	t.Cleanup(func() {
		if os.Getenv("CDCLOG_E2E_KEEP") == "" {
			adm.DeleteTopics(context.Background(), k.in, k.out)
		}
	})
	return k
}

func (k *kafkaTarget) url(topic string) string {
	return "kafka://" + strings.Join(k.addrs, ",") + "/" + topic
}

func (k *kafkaTarget) read(t *testing.T) []outRecord { return readKafka(t, k.addrs, k.out) }

func (k *kafkaTarget) admin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// chunks cuts msgs into n consecutive parts.
func chunks(msgs []cdc.Message, n int) [][]cdc.Message {
	var out [][]cdc.Message
	for i := range n {
		out = append(out, msgs[i*len(msgs)/n:(i+1)*len(msgs)/n])
	}
	return out
}

// kafkaIngestArgs is the command line of the Kafka crash tests.
func (k *kafkaTarget) ingestArgs(db string, extra ...string) []string {
	return append([]string{"ingest", "--db", db, "--from", k.url(k.in), "--to", k.url(k.out),
		"--partition-check", "200ms", "--sink-timeout", "10s", "--drain-timeout", "30s"}, extra...)
}

func TestCdclogKafkaToKafkaExactlyOnceAcrossKillsLeaderMovesABrokerRestartANewPartitionAndCommitFaults(t *testing.T) {
	k := newKafkaTarget(t)
	const times = 3000
	input := mangled(times, 21)
	parts := chunks(input, 5)
	db := tempDB(t)
	sched := newKillSchedule(t, 800*time.Millisecond)
	partitions := int32(4)
	n := max(kills(t, 10), len(parts))
	var seen []string // the output after each kill
	var commitFaults []*kfake.FaultHandle
	for i := range n {
		if i == 3 { // a partition is added: read from its start
			if _, err := k.admin(t).CreatePartitions(context.Background(), 2, k.in); err != nil {
				t.Fatal(err)
			}
			partitions = 6
		}
		if i < len(parts) {
			produceKafka(t, k.addrs, k.in, partitions, parts[i])
		}
		p := startCdclog(t, k.ingestArgs(db)...)
		var faults sync.WaitGroup
		switch i {
		case 1: // leaders move while cdclog runs
			k.moveLeaders(t)
		case 2: // a broker goes down and comes back on its port
			if k.kf != nil {
				faults.Add(1)
				go func() { defer faults.Done(); restartBroker(t, k.kf, k.tr, 1, 300*time.Millisecond) }()
			}
		case 4: // transaction commits fail, before and after being applied
			if k.kf != nil {
				commitFaults = append(commitFaults,
					k.kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.RequestTimedOut, Count: 2}),
					k.kf.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.UnknownServerError, Count: 2}))
			}
		}
		if i%2 == 0 {
			killAfter(t, p, sched.next()) // from its start
		} else {
			killAfterVerified(t, p, sched.next()/4) // while it forwards
		}
		faults.Wait()
		out := k.read(t)
		seen = append(seen, fmt.Sprintf("%d records to time %d", len(out), outputFrontier(out)))
	}
	t.Logf("the output after each kill: %s", strings.Join(seen, "; "))
	for _, f := range commitFaults {
		t.Logf("a commit fault hit %d times", f.Hits())
	}
	for i := n; i < len(parts); i++ {
		produceKafka(t, k.addrs, k.in, partitions, parts[i])
	}
	p := startCdclog(t, append(k.ingestArgs(db), "--metrics", "127.0.0.1:0")...)
	waitVerified(t, p, "the last run")
	waitOutput(t, 3*time.Minute, times, p, func() []outRecord { return k.read(t) })
	// inspect asks the running ingest over its control socket; the
	// sink's position and the log ends are recorded within a second.
	var live brokerStatus
	waitForState(t, 30*time.Second, "inspect status of the running ingest to show the sink and the log ends", func() bool {
		live = inspectStatus(t, db)
		return len(live.Inputs) == 6 && live.Inputs[0].LogEnd != nil && len(live.Sinks) == 1 &&
			live.Sinks[0].Output == "kafka:"+k.out && live.Sinks[0].Lag == 0
	}, func() string { return fmt.Sprintf("inputs %+v, sinks %+v", live.Inputs, live.Sinks) })
	// The same figures are metrics.
	scraped := scrapeMetrics(t, p)
	if want := `cdclog_broker_sink_lag_records{output="kafka:` + k.out + `"} 0`; !strings.Contains(scraped, want) {
		t.Errorf("metrics lack %s:\n%s", want, scraped)
	}
	if n := strings.Count(scraped, "\ncdclog_broker_input_lag_messages{"); n != 6 {
		t.Errorf("%d partitions' input lag in the metrics, want 6", n)
	}
	if e := p.stop(time.Minute); e.code != 0 {
		t.Fatalf("the last run, stopped by SIGTERM: %v", e)
	}
	end, cursors := storedEnd(t, db)
	checkOutput(t, k.read(t), end, input)
	cur, err := kafka.DecodeCursor(cursors["kafka:"+k.in])
	if err != nil || len(cur.Partitions) != 6 {
		t.Errorf("cursor %+v, %v: want the 6 partitions", cur, err)
	}
	if !strings.Contains(p.stderr.String(), "ingest stopped") {
		t.Errorf("no summary line after SIGTERM:\n%s", p.stderr.String())
	}
}

// moveLeaders moves every partition's leader (kfake only).
func (k *kafkaTarget) moveLeaders(t *testing.T) {
	t.Helper()
	if k.kf == nil {
		return
	}
	k.kf.ShufflePartitionLeaders()
	for p := int32(0); p < 4; p++ {
		if err := k.kf.MoveTopicPartition(k.in, p, (p+1)%3); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.kf.MoveTopicPartition(k.out, 0, 2); err != nil {
		t.Fatal(err)
	}
}

// runUntil runs cdclog with args, stopping it with SIGTERM every second,
// until done holds of the database's cursors.
func runUntil(t *testing.T, db string, args []string, what string, done func(map[string][]byte) bool) {
	t.Helper()
	for range 30 {
		p := startCdclog(t, args...)
		time.Sleep(time.Second)
		if e := p.stop(time.Minute); e.code != 0 {
			t.Fatalf("cdclog stopped by SIGTERM: %v", e)
		}
		if _, cursors := storedEnd(t, db); done(cursors) {
			return
		}
	}
	t.Fatalf("30 runs, and still not %s", what)
}

func TestCdclogKafkaRetentionGapExitsOneUnlessAllowGap(t *testing.T) {
	k := newKafkaTarget(t)
	input := mangled(100, 22)
	produceKafka(t, k.addrs, k.in, 4, input[:40])
	db := tempDB(t)
	args := []string{"ingest", "--db", db, "--from", k.url(k.in), "--out", tempDB(t) + ".jsonl"}
	runUntil(t, db, args, "40 messages committed", func(c map[string][]byte) bool {
		cur, err := kafka.DecodeCursor(c["kafka:"+k.in])
		return err == nil && cur.Partitions[2].Offset == 10
	})

	// Retention deletes records of partition 2 that were never read.
	produceKafka(t, k.addrs, k.in, 4, input[40:])
	var offs kadm.Offsets
	offs.AddOffset(k.in, 2, 15, -1)
	if _, err := k.admin(t).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	e := startCdclog(t, args...).wait(time.Minute)
	if e.code != 1 || !strings.Contains(e.stderr, "input messages were deleted before they were read") ||
		!strings.Contains(e.stderr, "/2: ") || !strings.Contains(e.stderr, "committed position 10") || !strings.Contains(e.stderr, "--allow-gap") {
		t.Fatalf("want exit 1 naming partition 2's gap from 10 and --allow-gap; got %v", e)
	}
	t.Logf("cdclog says: %s", lastLine(e.stderr))

	runUntil(t, db, append(args, "--allow-gap"), "partition 2 read past the gap", func(c map[string][]byte) bool {
		cur, err := kafka.DecodeCursor(c["kafka:"+k.in])
		return err == nil && cur.Partitions[2].Offset > 15
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestCdclogKafkaViolationExitsThree(t *testing.T) {
	k := newKafkaTarget(t)
	bad := []cdc.Message{
		{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"a"`), Time: 1, Diff: 1}},
		{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"a"`), Time: 1, Diff: 2}},
	}
	produceKafka(t, k.addrs, k.in, 1, bad)
	e := startCdclog(t, "ingest", "--db", tempDB(t), "--from", k.url(k.in), "--to", k.url(k.out)).wait(time.Minute)
	if e.code != 3 || !strings.Contains(e.stderr, k.in+"/0") {
		t.Fatalf("want exit 3 naming the input partition; got %v", e)
	}
}

func TestCdclogKafkaSecondInstanceOnOneSinkIDFencesTheOlder(t *testing.T) {
	k := newKafkaTarget(t)
	const times = 400
	input := mangled(times, 23)
	half := len(input) / 2
	produceKafka(t, k.addrs, k.in, 4, input[:half])
	db := tempDB(t)
	args := func(db string) []string { return k.ingestArgs(db, "--sink-id", "orders") }
	// A copy of the database (a restored backup, a failed-over volume)
	// is started while the original runs again: the newer writer fences
	// the older, which exits 1 once it has something to write.
	copyDB := forwardThenCopy(t, db, args(db), func() []outRecord { return k.read(t) })
	older := startCdclog(t, args(db)...)
	waitVerified(t, older, "the older writer")
	newer := startCdclog(t, args(copyDB)...)
	waitVerified(t, newer, "the newer writer")
	produceKafka(t, k.addrs, k.in, 4, input[half:])
	if e := older.wait(time.Minute); e.code != 1 || !strings.Contains(e.stderr, "fenced") {
		t.Fatalf("the older writer: want exit 1, fenced; got %v", e)
	}
	waitOutput(t, 2*time.Minute, times, newer, func() []outRecord { return k.read(t) })
	if e := newer.stop(time.Minute); e.code != 0 {
		t.Fatalf("the newer writer: %v", e)
	}
	end, _ := storedEnd(t, copyDB)
	checkOutput(t, k.read(t), end, input)
}

// brokerStatus is what the broker tests read of inspect status --json.
type brokerStatus struct {
	OutputRecords uint64 `json:"output_records"`
	Inputs        []struct {
		Input     string `json:"input"`
		Partition *int32 `json:"partition"`
		Next      int64  `json:"next"`
		LogEnd    *int64 `json:"log_end"`
		Lag       *int64 `json:"lag"`
	} `json:"inputs"`
	Sinks []struct {
		Output string `json:"output"`
		Acked  uint64 `json:"acked"`
		Lag    uint64 `json:"lag"`
	} `json:"sinks"`
}

// inspectStatus runs cdclog inspect status --json on db.
func inspectStatus(t *testing.T, db string) brokerStatus {
	t.Helper()
	p := startCdclog(t, "inspect", "--db", db, "status", "--json")
	if e := p.wait(time.Minute); e.code != 0 {
		t.Fatalf("inspect: %v", e)
	}
	var st brokerStatus
	if err := json.Unmarshal([]byte(p.stdout.String()), &st); err != nil {
		t.Fatalf("inspect status --json: %v\n%s", err, p.stdout.String())
	}
	return st
}

func TestCdclogPublishForwardsWhatIngestCommittedAndInspectShowsThePositions(t *testing.T) {
	k := newKafkaTarget(t)
	const times = 300
	input := mangled(times, 24)
	produceKafka(t, k.addrs, k.in, 4, input)
	db := tempDB(t)
	group := "cdclog-monitor-" + k.in
	runUntil(t, db, []string{"ingest", "--db", db, "--from", k.url(k.in), "--out", db + ".jsonl", "--commit-group", group}, "the whole input committed", func(c map[string][]byte) bool {
		cur, err := kafka.DecodeCursor(c["kafka:"+k.in])
		n := int64(0)
		for _, p := range cur.Partitions {
			n += p.Offset
		}
		return err == nil && n == int64(len(input))
	})
	// --commit-group wrote positions for monitoring tools (the last
	// commit's may not have been written when ingest stopped).
	offs, err := k.admin(t).FetchOffsets(context.Background(), group)
	var grouped int64
	offs.Each(func(o kadm.OffsetResponse) { grouped += o.At })
	if err != nil || grouped <= 0 || grouped > int64(len(input)) {
		t.Errorf("consumer group %s holds offsets summing to %d (%v); want some of the %d read", group, grouped, err, len(input))
	}
	if e := startCdclog(t, "publish", "--db", db, "--to", k.url(k.out)).wait(2 * time.Minute); e.code != 0 {
		t.Fatalf("publish: %v", e)
	}
	end, _ := storedEnd(t, db)
	checkOutput(t, k.read(t), end, input)
	// Publishing again verifies the output and sends nothing.
	if e := startCdclog(t, "publish", "--db", db, "--to", k.url(k.out)).wait(time.Minute); e.code != 0 {
		t.Fatalf("publish again: %v", e)
	}
	checkOutput(t, k.read(t), end, input)

	st := inspectStatus(t, db)
	var next int64
	var parts []int32
	for _, in := range st.Inputs {
		next += in.Next
		parts = append(parts, *in.Partition)
		if in.LogEnd == nil || *in.Lag != 0 {
			t.Errorf("input %+v: want its log end recorded, lag 0", in)
		}
	}
	if !slices.Equal(parts, []int32{0, 1, 2, 3}) || next != int64(len(input)) {
		t.Errorf("inspect shows partitions %v with next offsets summing to %d; want 0-3 and %d", parts, next, len(input))
	}
	if len(st.Sinks) != 1 || st.Sinks[0].Output != "kafka:"+k.out || st.Sinks[0].Acked != st.OutputRecords || st.Sinks[0].Lag != 0 {
		t.Errorf("inspect shows sinks %+v; want kafka:%s with all %d records acknowledged", st.Sinks, k.out, st.OutputRecords)
	}
}

// scrapeMetrics reads the /metrics of a cdclog started with --metrics,
// at the address its log names.
func scrapeMetrics(t *testing.T, p *proc) string {
	t.Helper()
	m := regexp.MustCompile(`msg="serving metrics" url=(\S+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", p.stderr.String())
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
