package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/promtext"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/recovery"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// knownStream is a generated stream, mangled, with its number of
// distinct updates.
func knownStream(t testing.TB, times uint64) (msgs []cdc.Message, updates int) {
	t.Helper()
	gen := streamgen.Gen(streamgen.GenOptions{Seed: 7, Times: times, Keys: 50})
	for m := range gen {
		if m.Kind == cdc.KindUpdate {
			updates++
		}
	}
	gen = streamgen.Gen(streamgen.GenOptions{Seed: 7, Times: times, Keys: 50})
	for m := range streamgen.Mangle(gen, streamgen.MangleOptions{Seed: 8, MaxDelay: streamgen.DefaultMaxDelay,
		MaxCopies: streamgen.DefaultMaxCopies}) {
		msgs = append(msgs, m)
	}
	return msgs, updates
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// scrape fetches url and parses the text format.
func scrape(t testing.TB, url string) promtext.Families {
	t.Helper()
	fams, err := promtext.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value returns the value of the sample name with labels.
func value(fams promtext.Families, name string, labels ...string) (float64, bool) {
	return fams.Value(name, labels...)
}

func mustValue(t testing.TB, fams promtext.Families, name string, labels ...string) float64 {
	t.Helper()
	v, ok := fams.Value(name, labels...)
	if !ok {
		t.Fatalf("no metric %s%v in the scrape", name, labels)
	}
	return v
}

// openWatched opens a processor on a new database with m as its
// Observer, watched by m.
func openWatched(t testing.TB, m *Metrics, o recovery.Options) *recovery.Processor {
	t.Helper()
	o.Observer, o.Logger = m, quiet()
	p, err := recovery.Open(filepath.Join(t.TempDir(), "state.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	m.Watch(p)
	return p
}

// TestScrapeAfterARunMatchesTheStream runs a known stream through a
// processor in requests, scraping while it runs, and checks the figures
// of the last scrape against the stream and the database's status.
func TestScrapeAfterARunMatchesTheStream(t *testing.T) {
	dir := t.TempDir()
	sink, err := recovery.OpenFileSink(filepath.Join(dir, "out.jsonl"), recovery.FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := New(quiet())
	p := openWatched(t, m, recovery.Options{Sink: sink, SinkFormat: cdc.JSONL})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	msgs, updates := knownStream(t, 2000)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var lastAccepted float64
	go func() { // scrapes during the run see counters that never go down
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			v := mustValue(t, scrape(t, srv.URL), "cdclog_messages_total", "outcome", "accepted")
			if v < lastAccepted {
				t.Errorf("accepted went down from %v to %v", lastAccepted, v)
			}
			lastAccepted = v
		}
	}()
	const per = 500
	for i := 0; i < len(msgs); i += per {
		if _, err := p.Append(context.Background(), msgs[i:min(i+per, len(msgs))], nil); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	c, err := p.Consumer("billing")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, srv.URL)

	want := map[string]float64{
		"cdclog_messages_read_total":     float64(len(msgs)),
		"cdclog_requests_total":          float64((len(msgs) + per - 1) / per),
		"cdclog_output_records_total":    float64(st.OutputRecords),
		"cdclog_output_next_seq":         float64(st.OutputRecords + 1),
		"cdclog_pending_times":           float64(st.PendingTimes),
		"cdclog_pending_updates":         float64(st.PendingUpdates),
		"cdclog_wal_entries":             float64(st.WAL.Entries),
		"cdclog_wal_bytes":               float64(st.WAL.Bytes),
		"cdclog_db_file_bytes":           float64(st.FileBytes),
		"cdclog_up":                      1,
		"cdclog_consumer_lag_records":    float64(st.OutputRecords - 10),
		"cdclog_commit_duration_seconds": mustValue(t, fams, "cdclog_commits_total"),
	}
	for name, v := range want {
		if got := mustValue(t, fams, name); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	accepted := mustValue(t, fams, "cdclog_messages_total", "outcome", "accepted")
	if uint64(accepted) != st.AcceptedUpdates+st.AcceptedProgress || st.AcceptedUpdates != uint64(updates) {
		t.Errorf("accepted %v; status says %d updates and %d progress; the stream has %d distinct updates",
			accepted, st.AcceptedUpdates, st.AcceptedProgress, updates)
	}
	sum := 0.0
	for _, o := range []string{"accepted", "duplicate", "stale", "skipped", "quarantined", "refused"} {
		sum += mustValue(t, fams, "cdclog_messages_total", "outcome", o)
	}
	if sum != float64(len(msgs)) {
		t.Errorf("the outcomes add up to %v, want every message read (%d)", sum, len(msgs))
	}
	if mustValue(t, fams, "cdclog_fsync_duration_seconds", "file", "output") == 0 {
		t.Error("no fsync of the output file was observed")
	}
	if f, ok := value(fams, "cdclog_frontier"); st.Complete || !ok || f != float64(st.Frontier) {
		t.Errorf("frontier %v (reported: %v), status says %d (complete: %v)", f, ok, st.Frontier, st.Complete)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, srv.URL)
	if v := mustValue(t, fams, "cdclog_up"); v != 0 {
		t.Errorf("after Close cdclog_up = %v, want 0", v)
	}
	if got := mustValue(t, fams, "cdclog_messages_read_total"); got != float64(len(msgs)) {
		t.Errorf("after Close the counters changed: read %v", got)
	}
}

func TestTheFrontierIsReportedUntilTheStreamIsComplete(t *testing.T) {
	m := New(quiet())
	p := openWatched(t, m, recovery.Options{})
	defer p.Close()
	msgs := []cdc.Message{
		{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 0, Upper: 5}},
		{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"a"`), Time: 6, Diff: 1}},
	}
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	for name, want := range map[string]float64{"cdclog_frontier": 5, "cdclog_stream_complete": 0,
		"cdclog_pending_times": 1, "cdclog_pending_updates": 1} {
		if got := mustValue(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	end := cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 5, Unbounded: true,
		Counts: []cdc.Count{{Time: 6, Count: 1}}}}
	if _, err := p.Append(context.Background(), []cdc.Message{end}, nil); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, srv.URL)
	if v, ok := value(fams, "cdclog_frontier"); ok {
		t.Errorf("a complete stream reports frontier %v", v)
	}
	if v := mustValue(t, fams, "cdclog_stream_complete"); v != 1 {
		t.Errorf("cdclog_stream_complete = %v once complete", v)
	}
}

func TestMetricsFollowPrometheusNamingRules(t *testing.T) {
	m := New(quiet())
	p := openWatched(t, m, recovery.Options{})
	defer p.Close()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var ours []*dto.MetricFamily
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "cdclog_") {
			ours = append(ours, f)
		}
	}
	if len(ours) < 15 {
		t.Fatalf("only %d cdclog metrics gathered", len(ours))
	}
	problems, err := promlint.NewWithMetricFamilies(ours).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		t.Errorf("%s: %s", pr.Metric, pr.Text)
	}
}

func TestNothingIsReportedBeforeWatch(t *testing.T) {
	m := New(quiet())
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	if _, ok := value(fams, "cdclog_up"); ok {
		t.Error("cdclog_up before any processor is watched")
	}
	if v := mustValue(t, fams, "cdclog_commits_total"); v != 0 {
		t.Errorf("commits %v before any commit", v)
	}
}

// BenchmarkCommitted measures what counting one committed batch costs the
// commit goroutine.
func BenchmarkCommitted(b *testing.B) {
	m := New(quiet())
	s := recovery.BatchStats{Requests: 16, Messages: 65536, Commit: 3e6, Write: 2e6,
		Totals: recovery.Result{Accepted: 50000, Duplicates: 15000, Stale: 536, Output: 40000}}
	for range b.N {
		m.Committed(s)
	}
}

func TestServeAnswersMetricsUntilStopped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := New(quiet())
	stop := m.Serve(ln)
	url := "http://" + ln.Addr().String()
	if fams := scrape(t, url+"/metrics"); fams["cdclog_commits_total"] == nil {
		t.Fatal("no cdclog_commits_total in the scrape")
	}
	resp, err := http.Get(url + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/other: %d, want 404", resp.StatusCode)
	}
	stop()
	if _, err := http.Get(url + "/metrics"); err == nil {
		t.Fatal("still answering after stop")
	}
}

// brokenSink is an output file whose writes fail.
type brokenSink struct{}

func (brokenSink) Write([]byte) (int, error)         { return 0, errors.New("no space left on device") }
func (brokenSink) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (brokenSink) Sync() error                       { return nil }
func (brokenSink) Size() (int64, error)              { return 0, nil }
func (brokenSink) Truncate(int64) error              { return nil }
func (brokenSink) Close() error                      { return nil }

func TestUpIsZeroAfterAStorageFailure(t *testing.T) {
	m := New(quiet())
	p := openWatched(t, m, recovery.Options{Sink: brokenSink{}, SinkName: "/out.jsonl", SinkFormat: cdc.JSONL})
	defer p.Close()
	msgs := []cdc.Message{
		{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"a"`), Time: 0, Diff: 1}},
		{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 0, Upper: 1, Counts: []cdc.Count{{Time: 0, Count: 1}}}},
	}
	// The batch commits, then writing its records to the file fails:
	// the append succeeds (a reopen writes them) and the processor stops.
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatalf("append of a batch that committed: %v", err)
	}
	more := []cdc.Message{{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"b"`), Time: 1, Diff: 1}}}
	if _, err := p.Append(context.Background(), more, nil); !errors.Is(err, recovery.ErrFailed) {
		t.Fatalf("append after the failure: %v, want ErrFailed", err)
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	if v := mustValue(t, fams, "cdclog_up"); v != 0 {
		t.Fatalf("cdclog_up = %v after a storage failure", v)
	}
	if v := mustValue(t, fams, "cdclog_commits_total"); v != 1 {
		t.Fatalf("cdclog_commits_total = %v, want the one commit before the failure", v)
	}
}

func TestBrokerPositionsAreGaugesWithTheirLag(t *testing.T) {
	m := New(quiet())
	end := int64(120)
	m.WatchBrokers(func() ([]BrokerInput, []BrokerSink, error) {
		return []BrokerInput{
				{Input: "kafka:cdc", Partition: 0, Next: 100, LogEnd: &end},
				{Input: "kafka:cdc", Partition: 1, Next: 7},
				{Input: "nats:CDC", Partition: -1, Next: 50, LogEnd: &end},
			}, []BrokerSink{{Output: "kafka:clean", Acked: 900, Lag: 12}},
			errors.New("cursor kafka:other: unreadable")
	})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cdclog_broker_input_next_offset", []string{"input", "kafka:cdc", "partition", "0"}, 100},
		{"cdclog_broker_input_log_end_offset", []string{"input", "kafka:cdc", "partition", "0"}, 120},
		{"cdclog_broker_input_lag_messages", []string{"input", "kafka:cdc", "partition", "0"}, 20},
		{"cdclog_broker_input_next_offset", []string{"input", "kafka:cdc", "partition", "1"}, 7},
		{"cdclog_broker_input_lag_messages", []string{"input", "nats:CDC", "partition", ""}, 70},
		{"cdclog_broker_sink_acked_seq", []string{"output", "kafka:clean"}, 900},
		{"cdclog_broker_sink_lag_records", []string{"output", "kafka:clean"}, 12},
	} {
		if got := mustValue(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if _, ok := value(fams, "cdclog_broker_input_lag_messages", "input", "kafka:cdc", "partition", "1"); ok {
		t.Error("a lag without a known log end")
	}
}
