package main

import (
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/promtext"
	"github.com/cdclog/cdclog/internal/streamgen"
)

// distinctUpdates counts the updates of the stream before mangling.
func distinctUpdates(s streamSpec) int {
	n := 0
	for m := range streamgen.Gen(streamgen.GenOptions{Seed: s.Seed, Times: s.Times, Keys: s.Keys}) {
		if m.Kind == cdc.KindUpdate {
			n++
		}
	}
	return n
}

// TestIngestMetricsDuringARunMatchTheStream ingests a known stream from a
// file, then waits on stdin (kept open) so that the run goes on, scrapes
// --metrics, and checks the figures against the stream and, once ingest
// has ended, the database.
func TestIngestMetricsDuringARunMatchTheStream(t *testing.T) {
	dir := t.TempDir()
	in, db, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	spec := streamSpec{Seed: 5, Times: 3000, Keys: 40}
	n := writeTestStream(t, in, cdc.JSONL, spec)
	stdin, feed := io.Pipe()
	defer feed.Close()
	ing := startBg(t, stdin, "serving metrics", "ingest", "--db", db, "--out", out, "--metrics", "127.0.0.1:0", in, "-")

	var fams promtext.Families
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if fams, err = promtext.Scrape(ing.url); err != nil {
			t.Fatalf("%v; ingest: %v", err, ing.result())
		}
		// A scrape is not atomic: the registry gathers the gauges and the
		// counters concurrently, and the counters of one committed batch
		// are added one after the other. Wait for a scrape taken after
		// the file's last batch was counted whole: its messages read, its
		// outcomes (added after its output records), and a next sequence
		// number that follows the records.
		read, _ := fams.Value("cdclog_messages_read_total")
		var outcomes float64
		for _, o := range []string{"accepted", "duplicate", "stale"} {
			v, _ := fams.Value("cdclog_messages_total", "outcome", o)
			outcomes += v
		}
		records, _ := fams.Value("cdclog_output_records_total")
		next, _ := fams.Value("cdclog_output_next_seq")
		if read == float64(n) && outcomes == float64(n) && next == records+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: of the file's %d messages %v read, %v with an outcome; output records %v, next seq %v",
				n, read, outcomes, records, next)
		}
		time.Sleep(20 * time.Millisecond)
	}
	get := func(name string, labels ...string) float64 {
		v, ok := fams.Value(name, labels...)
		if !ok {
			t.Fatalf("no %s%v in the scrape", name, labels)
		}
		return v
	}
	accepted := get("cdclog_messages_total", "outcome", "accepted")
	sum := accepted + get("cdclog_messages_total", "outcome", "duplicate") + get("cdclog_messages_total", "outcome", "stale")
	if sum != float64(n) {
		t.Errorf("accepted, duplicate and stale add up to %v, want the %d messages read", sum, n)
	}
	if get("cdclog_up") != 1 || get("cdclog_commits_total") == 0 || get("cdclog_fsync_duration_seconds", "file", "output") == 0 {
		t.Errorf("up %v, commits %v, output fsyncs %v during the run", get("cdclog_up"), get("cdclog_commits_total"),
			get("cdclog_fsync_duration_seconds", "file", "output"))
	}
	records, nextSeq := get("cdclog_output_records_total"), get("cdclog_output_next_seq")

	feed.Close() // stdin ends: ingest finishes
	if r := ing.wait(60 * time.Second); r.Code != 0 {
		t.Fatalf("ingest: %v", r)
	}
	if _, err := promtext.Scrape(ing.url); err == nil {
		t.Error("metrics still served after ingest ended")
	}
	st := dbStatus(t, db)
	if uint64(accepted) != st.AcceptedUpdates+st.AcceptedProgress || st.AcceptedUpdates != uint64(distinctUpdates(spec)) {
		t.Errorf("accepted %v; the database accepted %d updates and %d progress statements; the stream has %d distinct updates",
			accepted, st.AcceptedUpdates, st.AcceptedProgress, distinctUpdates(spec))
	}
	if records != float64(st.OutputRecords) || nextSeq != float64(st.OutputRecords+1) {
		t.Errorf("output records %v, next seq %v; the database holds %d records", records, nextSeq, st.OutputRecords)
	}
}

func TestIngestRefusesABusyMetricsPortBeforeIngesting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", `{"update":{"data":"a","time":0,"diff":1}}`+"\n")
	db := filepath.Join(dir, "s.db")
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--metrics", ln.Addr().String(), in},
		"listen on "+ln.Addr().String(), "address already in use")
	if dbExists(db) {
		t.Fatal("the database was created although --metrics could not listen")
	}
	expectFailure(t, exitUsage, nil, []string{"ingest", "--db", db, "--metrics", "nowhere", in}, "--metrics", "HOST:PORT")
}
