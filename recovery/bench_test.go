package recovery

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// BenchmarkProcessorSubmit measures the durable path end to end, without
// decoding: requests of 4096 messages of a duplicated and reordered stream,
// 16 in flight (as cdclog ingest submits them), through the receiver, the
// WAL, the output log and an output file, with and without the database's
// fsyncs (the output file is fsynced in both), and without them with an
// Observer (what metrics cost the hot path).
func BenchmarkProcessorSubmit(b *testing.B) {
	for _, tc := range []struct {
		name     string
		noSync   bool
		observer Observer
	}{{"fsync", false, nil}, {"no-db-fsync", true, nil}, {"no-db-fsync-observed", true, &countingObserver{}}} {
		b.Run(tc.name, func(b *testing.B) {
			const span = 30000 // times per round
			base := mangled(1, cleanStream(1, 0, span))
			dir := b.TempDir()
			sink, err := OpenFileSink(filepath.Join(dir, "out.jsonl"), FileSinkOptions{})
			if err != nil {
				b.Fatal(err)
			}
			p := openTest(b, filepath.Join(dir, "state.db"), Options{NoSync: tc.noSync, Sink: sink, SinkFormat: cdc.JSONL,
				Observer: tc.observer})
			defer p.Close()
			pushed := 0
			b.ResetTimer()
			for round := 0; round < b.N; round++ {
				b.StopTimer()
				msgs := shifted(base, uint64(round)*span)
				b.StartTimer()
				submitAll(b, p, msgs, 4096, 16)
				pushed += len(msgs)
			}
			b.ReportMetric(float64(pushed)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// shifted returns a copy of msgs with every time moved d later.
func shifted(msgs []cdc.Message, d uint64) []cdc.Message {
	out := make([]cdc.Message, len(msgs))
	for i, m := range msgs {
		switch m.Kind {
		case cdc.KindUpdate:
			m.Update.Time += d
		case cdc.KindProgress:
			m.Progress.Lower += d
			m.Progress.Upper += d
			counts := make([]cdc.Count, len(m.Progress.Counts))
			for j, c := range m.Progress.Counts {
				counts[j] = cdc.Count{Time: c.Time + d, Count: c.Count}
			}
			m.Progress.Counts = counts
		}
		out[i] = m
	}
	return out
}

// submitAll submits msgs in requests of n, keeping up to inFlight of them
// pending, and waits for all.
func submitAll(b *testing.B, p *Processor, msgs []cdc.Message, n, inFlight int) {
	ctx := context.Background()
	var pending []*Pending
	wait := func(w *Pending) {
		if _, err := w.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < len(msgs); i += n {
		w, err := p.Submit(ctx, Request{Msgs: msgs[i:min(len(msgs), i+n)]})
		if err != nil {
			b.Fatal(err)
		}
		if pending = append(pending, w); len(pending) >= inFlight {
			wait(pending[0])
			pending = pending[1:]
		}
	}
	for _, w := range pending {
		wait(w)
	}
}

// BenchmarkCanonicalData measures what Submit adds to a request whose
// data is already canonical (the decoders' output): one IsCanonical scan
// of each update's data. Compare with BenchmarkProcessorSubmit's ns per
// message.
func BenchmarkCanonicalData(b *testing.B) {
	msgs := mangled(1, cleanStream(1, 0, 30000))
	for i := range msgs {
		if msgs[i].Kind == cdc.KindUpdate && len(msgs[i].Update.Data) < 20 {
			// cleanStream's keys are short strings; the generator's
			// objects are longer: measure those.
			msgs[i].Update.Data = []byte(`{"id":4,"name":"k4"}`)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := canonicalData(msgs, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}

// BenchmarkObserveCommit measures what an Observer costs the commit
// goroutine per batch, on top of the Observer's own work (here a counter
// under a mutex): reading bbolt's write time twice and adding up 16
// requests' results. Compare with a batch's commit, about 5 ms for
// BenchmarkProcessorSubmit's batches of 16 requests of 4096 messages.
func BenchmarkObserveCommit(b *testing.B) {
	obs := &countingObserver{}
	p := openTest(b, dbPath(b), Options{Observer: obs})
	defer p.Close()
	w := &work{}
	for range 16 {
		w.reqs = append(w.reqs, &request{Request: Request{Msgs: make([]cdc.Message, 4096)}})
		w.results = append(w.results, Result{Accepted: 3000, Duplicates: 1000, Applied: 4096})
		w.errs = append(w.errs, nil)
	}
	b.ResetTimer()
	for range b.N {
		start, written := p.observeStart()
		p.observeCommit(w, start, written)
	}
}

// BenchmarkSinkTailStamp measures what the output file's proof of
// authorship (issue 12, item 2) costs each commit: keeping the file's last
// 4 KiB after a batch's bytes and their CRC-32C for the checkpoint.
func BenchmarkSinkTailStamp(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 2 << 20} {
		b.Run(fmt.Sprintf("batch-%dKiB", size>>10), func(b *testing.B) {
			batch := make([]byte, size)
			var t tailWindow
			var cs sinkState
			for b.Loop() {
				t.push(batch)
				t.stamp(&cs)
			}
		})
	}
}
