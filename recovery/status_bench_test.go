package recovery

import (
	"os"
	"strconv"
	"testing"
)

// BenchmarkStatus measures Processor.Status on a database of a few million
// messages (CDCLOG_BENCH_STATUS_MSGS, 3,000,000 by default, of a
// duplicated and reordered stream, never gc'd): what each metrics scrape,
// live inspect and ingest summary pays. Building the database takes a
// while; the timer covers only the Status calls.
func BenchmarkStatus(b *testing.B) {
	want := 3_000_000
	if s := os.Getenv("CDCLOG_BENCH_STATUS_MSGS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		want = n
	}
	const span = 30000 // times per round
	base := mangled(1, cleanStream(1, 0, span))
	p := openTest(b, dbPath(b), Options{NoSync: true})
	defer p.Close()
	for round, pushed := 0, 0; pushed < want; round++ {
		msgs := shifted(base, uint64(round)*span)
		submitAll(b, p, msgs, 4096, 16)
		pushed += len(msgs)
	}
	s, err := p.Status()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() { // b.Loop times only the loop
		if _, err := p.Status(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.WAL.Entries), "wal-entries")
	b.ReportMetric(float64(s.WAL.Chunks), "wal-chunks")
}
