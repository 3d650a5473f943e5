package recovery

import (
	"errors"
	"time"

	"github.com/cdclog/cdclog/demangle"
)

// Observer receives a running processor's figures as they happen, for
// monitoring: package metrics turns them into Prometheus metrics. The
// processor calls it from its own goroutines, one call at a time for each
// method, so its methods must be quick and must not call the Processor.
// What can be read at any time (the frontier, what is pending, the output
// end, the WAL's size) is not reported here: read it with Status.
//
// With no Observer (Options.Observer nil) the processor measures nothing.
type Observer interface {
	// Committed is called by the commit goroutine after each batch has
	// committed, before the batch's requests are answered.
	Committed(b BatchStats)
	// OutputSynced is called after each fsync of the output file
	// (Options.Sink) with how long the fsync took.
	OutputSynced(d time.Duration)
}

// BatchStats describes one committed group commit.
type BatchStats struct {
	// Requests is the number of requests the batch gathered and
	// delivered (a request committed in parts is counted with its last).
	Requests int
	// Messages counts the messages and undecodable inputs (Rejects) the
	// requests carried, whether applied or not (of a request committed in
	// parts, see Request, those of this part).
	Messages int
	// Totals adds up the requests' results: what became of the
	// messages.
	Totals Result
	// Refused counts the requests that a bad message stopped under policy
	// Fail (a protocol violation, an invalid message, a naive stream's
	// finish message): one message each, counted with the request's
	// last part.
	Refused int
	// Commit is how long the commit took: the bbolt transaction, with
	// its wait for the output file's fsync, and the write of the live
	// stream.
	Commit time.Duration
	// Write is the part of Commit that bbolt spent writing the
	// transaction's pages and meta page to the database file, each with
	// its fdatasync (bbolt's TxStats.WriteTime): the database's fsync
	// latency, and then some.
	Write time.Duration
}

// observeStart returns what the commit goroutine needs to measure a
// commit: its start and bbolt's total write time so far.
func (p *Processor) observeStart() (time.Time, time.Duration) {
	return time.Now(), p.writeTime()
}

// writeTime returns how long bbolt has spent writing commits so far.
func (p *Processor) writeTime() time.Duration {
	st := p.db.Stats()
	return st.TxStats.GetWriteTime()
}

// observeCommit reports batch w, committed since start, to the Observer.
func (p *Processor) observeCommit(w *work, start time.Time, written time.Duration) {
	b := BatchStats{Requests: len(w.reqs), Messages: w.msgs, Commit: time.Since(start),
		Write: p.writeTime() - written}
	for i := range w.reqs {
		b.Totals.Add(w.results[i])
		if w.split && i == len(w.reqs)-1 {
			// It goes on in the next batch, which counts it, and its
			// error if one stopped it.
			b.Requests--
			continue
		}
		if err := w.errs[i]; err != nil && refusal(err) {
			b.Refused++
		}
	}
	p.opts.Observer.Committed(b)
}

// refusal reports whether err is the receiver's refusal of a message (a
// protocol violation, an invalid message, a naive stream's finish).
func refusal(err error) bool {
	return demangle.IsViolation(err) || errors.Is(err, demangle.ErrInvalid) || errors.Is(err, demangle.ErrNaive)
}
