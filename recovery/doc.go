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
//	c, err := p.Consumer("billing")             // a named reader whose position cdclog keeps
//	res, err := p.GC(ctx, recovery.GCOptions{})  // drop the completed WAL while running
//
// Append is safe for concurrent use; appends that arrive together share one
// bbolt transaction and one fsync (group commit), like bbolt's DB.Batch.
// Because every statement of the protocol is true forever, re-appending a
// message is harmless: after an error or a crash a producer may simply send
// again what it is not sure was committed.
//
// # Exactly once into your own store
//
// Every output record has a sequence number (1, 2, 3, ...), fixed once
// committed: Output(ctx, n) yields record n and those after it, the same
// records after any crash. So a consumer that applies the clean stream to
// its own store (SQLite, Postgres, bbolt, a file) gets each record into it
// exactly once by keeping, in the same transaction as the changes a
// record makes, the sequence number of the last record it applied; on
// start it reads that number, seq, and resumes with Output(ctx, seq+1).
// A crash before the store's commit loses the changes and the number
// together, so the record is applied again; after it, both are kept, so
// it is not. Nothing is committed on cdclog's side. The HTTP and command
// line forms are the same: `GET /v1/output?from=SEQ` and `cdclog replay
// --db PATH --from-seq SEQ`. Example_exactlyOnce shows it, and
// examples/sqlite (a module of its own) applies the stream to a SQLite
// table and is tested under kill -9.
//
// Applying whole steps makes the store's state consistent as of a time:
// the records of one step are its updates then its progress statement, so
// a transaction that ends at a progress record holds every change below
// that statement's upper bound, and none above.
//
// A Consumer keeps its position in cdclog's database instead, which is
// simpler but another database: a handler that applies a record to its
// store and then calls Commit applies the record twice if the process
// dies between the two. It is at-least-once into anything else, and
// exactly-once only for an idempotent handler (or one that undoes, on
// start, what it did past the committed position). Its gain is that
// cdclog knows its position: Consumers lists it with its lag, and gc's
// retention keeps every record it has not committed (a consumer that keeps
// its position in its own store is unknown to cdclog: choose a retention
// that outlasts its downtime).
//
// # Retention and online gc
//
// The WAL below the frontier and, with a limited Retention, the output
// records that nothing needs any more can be dropped: offline by GC
// (`cdclog gc`), which also compacts the file, or while the processor runs
// by Processor.GC, which does not. A record is kept while a registered
// Consumer has not committed it, while an output file the checkpoint
// remembers lacks it, or while the stream (Options.Live) of an interrupted
// run may not have received it; the output log's last chunk is always
// kept. The checkpoint records the first record kept (OutputStart), the
// cross-checks compare it with the log's first chunk, and reading before
// it is an *OutputDroppedError. Processor.GC, consumer commits, seeks and
// deletions run on the commit goroutine between two group commits: it is
// the database's one writer, and it stamps gc's floors on every batch's
// checkpoint.
//
// # Durability and exactly-once
//
// Each group commit is one bbolt transaction holding: the batch's accepted
// messages (appended to the WAL), the output records they released
// (appended to the output log, numbered from 1), and the checkpoint: the
// receiver's frontier, the counters, the producers' cursors (such as an input
// file offset), the output file's committed size, and the receiver's memory
// horizon. What the receiver holds about each time is a function of the
// accepted messages about it, in the order they were accepted, all of which
// are in the WAL, so on Open the state after the last committed transaction
// is rebuilt exactly from the checkpoint and the WAL (see "The pending state
// on disk"); nothing is half-applied, because bbolt commits atomically. A
// batch ends once its output reaches a bound, even within a request (see
// Request): a request that completes many held times at once commits in
// parts, its cursor with the last, which a producer resuming from that
// cursor reads again as duplicates.
//
// A single message can release far more than that: the statement that
// completes a time of ten million updates releases ten million records.
// The receiver then releases in parts (demangle.Receiver.SetOutputLimit,
// at the batch's output bound): the batch ends with the first part, and
// the batches after it, with or without requests, each carry the next
// part until the release is done; the request that caused it delivers
// its result with the last. So neither a batch's output nor its encoded
// records and bytes outgrow the bound. The checkpoint of a batch that
// ends part-way says so: Releasing, and Released, the number of update
// records that follow, in the output log, the last progress statement
// (whose upper bound is the checkpoint's Frontier, and the output file's
// chained frontier). The recovery argument: the times from that Frontier
// on are pending, so Open rebuilds them from the WAL as for any
// checkpoint; the receiver then runs the same step from the same
// frontier over the same held state, whose release is deterministic (the
// order within a time is canonical), drops its first Released records,
// which the output log holds, and owes exactly the records that follow
// (demangle.Receiver.Restore). The first batch after the open goes on
// with them. A checkpoint from before these fields has neither, which
// reads as no release under way: what older code committed always ended
// with its release whole.
//
// The output file (Options.Sink) receives a batch's records only after
// the batch's transaction commits, and a later commit records the size its
// fsync made durable. After a crash the file may hold bytes past the
// committed size, but never fewer, and they are the output log's next
// records (the last perhaps torn): Open takes the whole ones and cuts the
// rest, writing what the file lacks (see "The output file").
// The receiver's output depends only on the order in which messages are
// pushed, and a producer resumes from its committed cursor (or re-sends from
// the start: the committed prefix is then all duplicates), so the records
// that follow are the ones an uninterrupted run would have written. Hence
// the file ends byte-identical to that of an uninterrupted run: no duplicate,
// missing or torn line.
//
// Update data is stored in its canonical encoding: Submit and Append
// canonicalise it (cdc.AppendCanonical) or refuse the request
// (ErrInvalidData), since the WAL and the receiver compare data by its
// bytes.
//
// # The output file
//
// The output file is known by its path, and anything may happen to a
// path between two runs, so the processor writes or cuts a file only when
// it can tell that the file is the one it wrote. OpenFileSink takes an
// exclusive flock on the file for as long as the sink is open: two
// processors never write one file (the second gets ErrSinkLocked). A path
// that is not a regular file, or names a file descriptor (/dev/stdout,
// /dev/fd/N, /proc/PID/fd/N: they may lead to a file another program
// writes), is refused (ErrSinkStream): write to it as a stream, below.
// A file OpenFileSink creates has its directory fsynced before the
// checkpoint can name it.
//
// With every commit the checkpoint records the size up to which the file
// is known durable, the CRC-32C of every byte before it (kept running, so
// a commit costs nothing more) and of its last 4 KiB, its inode, and the
// frontier after its last record. Since the file only ever receives
// committed records, whatever an interrupted run left past the committed
// size is the output log's records that follow it. Open then, before
// writing anything:
//
//  1. refuses a file shorter than the committed size (ErrSinkShort);
//  2. checks the committed bytes: the CRC of every byte before the
//     committed size (ErrSinkChanged): another file at the path, or this
//     one edited anywhere, is told apart before anything is appended to
//     it (reading the file once: 1 GiB took 0.27 s from the page cache,
//     1.5 s cold, on the 2-core test machine);
//  3. takes the bytes past the committed size that are, byte for byte,
//     the committed records the file lacks (a catch-up or a run that was
//     interrupted, or a file regenerated with cdclog replay), moving the
//     file's state past them;
//  4. cuts what remains only if it is a prefix of the next committed
//     record's bytes, or zeros (a file system may show zeros where
//     written data never reached the disk): a record torn by the crash.
//     Anything else, another program's bytes appended after a crash
//     included, is refused (ErrSinkExcess) and the file left as it is.
//
// Every error says what it found and how to recover: move the file aside
// and regenerate it with `cdclog replay --db PATH > FILE` (step 3 then
// takes it as it is). A file the database never wrote must be empty. The
// checkpoint keeps the state of every output file the database has
// written, so going back to an earlier one checks it in the same way and
// catches it up with the records committed since.
//
// Databases from before these checks (sinkState.V below 2) recorded only
// the CRC of the last 4 KiB and a Limit, because their file ran ahead of
// the commits: Open checks the tail and, for V 0, the final newline,
// cuts past the committed size only what continues the committed stream
// within the Limit, and the first commit records the rest.
//
// # Streams
//
// Options.Live is a stream (stdout, a pipe, a device): it is never cut or
// read back, and is written at least once. Each batch's output goes to it
// after the batch commits, and the checkpoint keeps how far the writes got
// (LiveNext, recorded by the next commit and by Close). A run with a
// stream first writes the records from LiveNext on: those a run before it
// committed but may not have written before it stopped, which may reach
// the stream twice. A run without a stream owes none: a stream receives
// the records committed while one is attached. A failed write to the
// stream (a reader that went away) stops the processor with ErrLiveOutput,
// which is not a storage failure: what was committed stays committed.
//
// # The pending state on disk
//
// The messages held for incomplete times are the WAL's entries at or above
// the frontier: they are on disk already. The receiver (package demangle)
// keeps in memory only the times from the frontier up to its horizon, within
// Options.PendingMemory (32 MiB as it counts held state); until it passes
// that, there is no horizon and it holds everything. Past it, between group
// commits, the apply goroutine waits until every batch it applied has
// committed and has the receiver shed: the horizon moves down until half the
// budget is held, and what was held beyond it is dropped from memory (it is
// in the WAL). The frontier's own time is never shed: the receiver
// deduplicates and sorts its updates in memory, so one time's distinct
// updates must fit in memory (about 200 bytes of RSS each in ingest: one
// time of 10M updates peaked at 1.98 GB). A message about a time at or beyond the horizon is then
// accepted unjudged, logged like any other, and kept in memory only until
// its batch commits; as the frontier comes near, the receiver loads windows
// of times back from the WAL and judges what it finds in the order it was
// accepted (by arrival number). The store that does this (walstore.go) reads
// WAL chunks, not the index's key range: a chunk is indexed under its last
// time, but since schema 3 its index record also starts at the earliest time
// its entries speak about, a progress statement's lower bound included
// (wal.Entry.Span), so a heap of (that first time, chunk) finds every chunk
// that may hold an entry in a window. Chunks written before schema 3
// (numbered below meta "spans_from") are taken to start where the rescan
// that found them started, which is always safe. On disk that adds nothing:
//
//	checkpoint  horizon (the first time only on disk, when spilled),
//	            spilled, cold (entries beyond it not judged yet), judged
//	            ([last time, arrival + 1] pairs: entries below that arrival
//	            were judged for every time up to that last one); releasing
//	            and released (a release under way, see "Durability")
//	wal         index record: first time = the smallest Time - Span
//	meta        "spans_from": the first chunk indexed so
//
// The recovery argument. Open reads the checkpoint, lists the index records
// of the chunks whose last time is at or above the frontier (36 bytes each),
// and loads the WAL's entries from the frontier to the horizon (to the end
// when there is none), in arrival order, into a receiver at the frontier.
// That is what the receiver held in memory at the commit: every message about
// those times that it had accepted is in the WAL with its arrival number, and
// judging them in that order gives each time exactly the state it had (what a
// time holds depends only on the messages about it in arrival order, and a
// message that was judged beyond the horizon later is judged the same way
// now). Entries beyond the horizon stay on disk, as they were. The checkpoint's
// judged pairs say which entries were judged already (found to repeat or to
// contradict an earlier one, and reported), so that loading them again
// reports and counts nothing; a violation found in a batch that did not
// commit is found again. So an open reads about PendingMemory's worth of
// entries, plus the index records of the pending chunks, however much is
// pending, and the receiver then behaves as the one that committed: the same
// releases, the same output (TestSimulatedFaultsLoseNothingAcknowledged runs
// with budgets of a few hundred bytes, with crashes). A checkpoint written
// before schema 3 has no horizon: the whole pending WAL is loaded, as before,
// and shed at once if it passes the budget.
//
// What the horizon changes: a violation by a message accepted beyond it is
// reported when its time is loaded, as a *demangle.ViolationError with
// Deferred set, in the result of the request whose message made the receiver
// load it (under Fail that request stops after that message; the violating
// message, accepted earlier, is dropped, and a rerun does not report it
// again); a duplicate beyond it is logged and counted as accepted until it is
// loaded. Reader.Status rebuilds what an open would; Reader.Pending loads the
// whole pending WAL, and Reader.ScanPending (inspect pending) a window of
// times at a time.
//
// # How it runs
//
// Three goroutines make a pipeline, with a fixed set of three batches
// going round it: the apply goroutine gathers submitted requests into a
// batch and runs the receiver; the prepare goroutine encodes the batch's
// WAL chunks, output log records and output bytes; the commit goroutine
// writes the bbolt transaction, then the batch's output bytes to the
// file, before it delivers the batch's results, and a sink writer
// goroutine fsyncs them while the next batch commits (at most 64 MiB
// ahead of the last fsync). So while batch k commits, batch k+1 is
// prepared and batch k+2 applied.
//
// A commit, write or fsync error is fatal: the processor stops (later calls return
// ErrFailed) rather than retry and risk hiding a lost write; the next Open
// recovers from the last commit. After Close, every method that needs the
// database returns ErrClosed. Err says which, for a health check.
//
// # Watching it run
//
// Status, OutputEnd and ConsumerPositions read the state of the last
// commit at any time. None of them walks the WAL: Open reads the WAL's
// figures (entries, chunks, bytes, its smallest and largest times) from
// its index once, each commit adds what its batch wrote
// (wal.Batch.Written) and Processor.GC takes off what it deleted
// (wal.Log.DeleteBelowUpdating, which walks the index it keeps only when
// it deleted the chunk holding the smallest time), so that Status costs
// the same on any size of WAL: 5 to 8 µs on a WAL of 8M entries in 8,051
// chunks, where the walk took 1.8 to 2.1 ms (BenchmarkStatus), and 0.14 s
// on an 18 GB one. The figures live only in memory, nothing is added to
// the checkpoint, so a crash leaves nothing to reconcile: the next Open
// reads them afresh. A damaged index record anywhere in the WAL therefore
// fails Open (a *store.CorruptError), where it failed only Status before.
// A Reader (inspect on a file) walks the index for each Status.
// Options.Observer is told, by the commit goroutine,
// what each committed batch held and how long its commit and bbolt's
// writes took, and by the output file's writer how long each fsync took;
// package metrics turns both into Prometheus metrics. Without an Observer
// nothing is measured.
//
// # Where things are
//
// One concern a file, in the order a message meets them:
//
//	processor.go   Processor: Open, Submit, Append, Close, Err
//	options.go     Options; request.go: Request, Result, Pending
//	recover.go     what Open rebuilds: the start check, the receiver from
//	               the checkpoint and the WAL (the WAL's replay at Open)
//	upgrade.go     older schemas brought up to date at Open
//	ingest.go      Processor.Ingest and the Source it reads
//	apply.go       the apply goroutine: batches, the receiver, the policy
//	walstore.go    the pending state on disk (the receiver's store)
//	prepare.go     the prepare goroutine: WAL chunks, output bytes
//	commit.go      the commit goroutine: batches and maintenance writes
//	checkpoint.go  the checkpoint; layout.go: schema and record checksums
//	outputlog.go   the output log (numbered records, on disk)
//	output.go      Processor.Output and the output's ends
//	livestream.go  Options.Live, written at least once
//	sink*.go       the output file: FileSink, its writer goroutine, the
//	               checks and catch-up at Open (sinkrecovery.go), the
//	               record scan and the tail CRC those use; OpenOutput
//	               (sinkopen.go): a path as the file or a stream
//	consumer.go    Consumer; consumers.go: their positions, list, delete
//	retention.go   Retention, the output floor and the time marks
//	quarantine.go  the quarantine bucket, one record per reject
//	gc.go          GC offline and Processor.GC
//	reader.go      Reader: read-only views, the stored output (replay)
//	rederive.go    Reader.Rederive and Verify: the output anew from the WAL
//	status.go      Status, Frontier and their log fields; status_json.go
//	               its JSON
//	check.go       Check (cdclog check); check_output.go, crosscheck.go
//	observer.go    Observer and BatchStats
//	errors.go      the errors callers tell apart
package recovery
