// Package recovery is cdclog's durable processor: the one place that ties
// the write-ahead log, the checkpoint and the output sink together. It is
// the API to embed cdclog in a Go service; the cdclog command line's ingest,
// replay and inspect are thin layers over it.
//
// # Using it
//
//	p, err := recovery.Open("state.db", recovery.Options{})
//	defer p.Close()
//	res, err := p.Append(ctx, msgs, nil)        // returns once durably committed
//	for rec, err := range p.Output(ctx, 1) { … } // the clean stream, blocking for more
//	c, err := p.Consumer("billing")             // a named, resumable reader
//
// Append is safe for concurrent use; appends that arrive together share one
// bbolt transaction and one fsync (group commit), like bbolt's DB.Batch.
// Because every statement of the protocol is true forever, re-appending a
// message is harmless: after an error or a crash a producer may simply send
// again what it is not sure was committed.
//
// # Durability and exactly-once
//
// Each group commit is one bbolt transaction holding: the batch's accepted
// messages (appended to the WAL), the output records they released
// (appended to the output log, numbered from 1), and the checkpoint: the
// receiver's frontier, the counters, the producers' cursors (such as an input
// file offset) and the output file's committed size. The receiver's state is
// a function of the set of accepted messages at or above the frontier, all
// of which are in the WAL, so on Open the state after the last committed
// transaction is rebuilt exactly by replaying the WAL from the checkpointed
// frontier; nothing is half-applied, because bbolt commits atomically.
//
// The output file (Options.Sink) is written and fsynced before the
// transaction that records its new size commits. After a crash the file may
// hold bytes past the committed size, but never fewer: Open cuts it back.
// The receiver's output depends only on the order in which messages are
// pushed, and a producer resumes from its committed cursor (or re-sends from
// the start: the committed prefix is then all duplicates), so the records
// that follow are the ones an uninterrupted run would have written. Hence
// the file ends byte-identical to that of an uninterrupted run: no duplicate,
// missing or torn line.
//
// # How it runs
//
// Three goroutines make a pipeline, with a fixed set of three batches
// going round it: the apply goroutine gathers submitted requests into a
// batch and runs the receiver; the prepare goroutine encodes the batch's
// WAL chunks, output log records and output bytes, and hands the bytes to
// a writer that writes and fsyncs the output file at once; the commit
// goroutine writes the bbolt transaction, waiting for the output file's
// fsync before committing. So while batch k commits, batch k+1 is
// prepared and its output bytes written, and batch k+2 applied: the file
// may then hold bytes of two batches past the committed size, which Open
// cuts back as above.
//
// A commit or fsync error is fatal: the processor stops (later calls return
// ErrFailed) rather than retry and risk hiding a lost write; the next Open
// recovers from the last commit.
package recovery
