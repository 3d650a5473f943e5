// Package metrics exposes a running recovery.Processor as Prometheus
// metrics (github.com/prometheus/client_golang): what `cdclog ingest
// --metrics ADDR` and `cdclog serve` serve on /metrics.
//
// # Using it
//
//	m := metrics.New()
//	p, err := recovery.Open("state.db", recovery.Options{Observer: m})
//	m.Watch(p)
//	http.Handle("/metrics", m.Handler())
//
// # Two kinds of figures
//
// Counters and histograms count what this process did since it started:
// m is the processor's recovery.Observer, which the commit goroutine
// tells about each committed batch, and the output file's writer about
// each fsync. They only grow while the process runs (a restart begins
// them again from zero, which Prometheus's rate() expects). Updating them
// costs a few atomic adds per batch of thousands of messages.
//
// Gauges say where the database stands, and are read at scrape time from
// the watched processor (Processor.Status, OutputEnd, ConsumerPositions),
// which copy the state of the last commit under the processor's lock and
// read the database in a bbolt read transaction: a scrape never waits for
// a commit, and a commit waits for a scrape only when bbolt must grow its
// memory map while the scrape's read transaction is open. The WAL's
// figures (entries, chunks, bytes) are the ones the processor keeps
// (walked once at open, then updated by each commit and gc), so a scrape
// costs the same whatever the WAL's size: Status takes 5 to 8 µs on a WAL
// of 2.4M or 8M entries (recovery's BenchmarkStatus).
//
// # The metrics
//
// Counters, since the process started:
//
//	cdclog_messages_read_total            messages (and undecodable inputs) in committed requests
//	cdclog_messages_total{outcome}        what became of them: accepted, duplicate, stale
//	                                      (below the frontier), skipped, quarantined, or
//	                                      refused (stopped a request under --on-error fail)
//	cdclog_requests_total                 requests committed (ingest's batches, serve's appends)
//	cdclog_commits_total                  group commits (bbolt transactions)
//	cdclog_output_records_total           output records released
//
// Histograms, in seconds:
//
//	cdclog_commit_duration_seconds        one group commit: its bbolt transaction, with its
//	                                      wait for the output file's fsync
//	cdclog_fsync_duration_seconds{file}   file="database": bbolt writing a commit's pages and
//	                                      meta page, each with its fdatasync; file="output":
//	                                      one fsync of the output file (--out)
//
// Gauges, as of the last commit:
//
//	cdclog_up                             1 while the processor runs, 0 once it stopped
//	                                      (a storage failure) or closed
//	cdclog_frontier                       every time below it is complete and emitted (absent
//	                                      once the stream is complete; a float: exact to 2^53)
//	cdclog_stream_complete                1 once every time has been emitted
//	cdclog_pending_times                  incomplete times held
//	cdclog_pending_updates                updates held for them
//	cdclog_output_next_seq                the sequence number the next output record gets
//	cdclog_consumer_lag_records{consumer} records committed past a consumer's position
//	cdclog_wal_entries, cdclog_wal_bytes  the write-ahead log
//	cdclog_db_file_bytes                  the database file
//	cdclog_last_commit_timestamp_seconds  when the last checkpoint was written (Unix time)
//
// With WatchBrokers, the broker inputs' and outputs' positions (what
// 'cdclog inspect status' shows of them):
//
//	cdclog_broker_input_next_offset{input,partition}    where reading resumes, as committed
//	cdclog_broker_input_log_end_offset{input,partition} the log's end as the source last saw it
//	cdclog_broker_input_lag_messages{input,partition}   the messages between the two
//	cdclog_broker_sink_acked_seq{output}                the last record on the broker output
//	cdclog_broker_sink_lag_records{output}              committed records it lacks
//
// The registry also holds the Go runtime's and the process's standard
// collectors (go_*, process_*).
package metrics
