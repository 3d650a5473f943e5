// Package server puts a recovery.Processor behind HTTP, in the manner of
// Kafka's REST proxy: producers append messages, consumers read the clean
// stream by sequence number, in any language. It is what `cdclog serve`
// runs; a Go program can mount a Server in its own http.Server.
//
//	p, err := recovery.Open("state.db", recovery.Options{Observer: m})
//	s, err := server.New(p, server.Options{Metrics: m.Handler()})
//	err = s.Serve(ctx, ln) // until ctx ends, then a graceful shutdown
//	p.Close()
//
// There is no authentication: anyone who can reach the listener can
// append to the stream and read it. cdclog serve listens on the loopback
// interface unless told otherwise (package internal/listen).
//
// # Appending
//
// POST /v1/append takes a body of messages: JSON Lines (Content-Type
// application/x-ndjson, application/jsonl, application/x-jsonlines,
// application/json or text/plain) or msgpack (application/msgpack,
// application/x-msgpack, application/vnd.msgpack). A body without a
// Content-Type, or labelled application/octet-stream or
// application/x-www-form-urlencoded (what curl -d sends), is in
// Options.Format (cdclog serve: the global --in-format). Other types are
// 415, and so is a Content-Encoding: bodies are not decompressed. It takes
// no query parameters: one is refused (400), nothing of the body applied.
//
// Appends are numbered from 1 in each run of the server, and the
// positions in answers and errors name them: "request 17:3" is line 3 of
// the 17th append (msgpack: "request 17: byte 120"). The write-ahead log
// records every append's messages under the one source "http" (with the
// line and offset in its body), since the checkpoint keeps every source
// name: a violation against a message appended before the server last
// started names that message "http:3".
//
// The whole body is decoded first, then submitted as one request
// (Processor.Submit), and the answer comes once it is durably committed.
// At most Options.MaxInFlight bytes of bodies are held at once (8 bodies
// of the largest size by default): an append waits for room before its
// body is read, so that memory stays bounded however many producers send.
// Concurrent appends share group commits: requests that arrive while a
// batch commits are applied and committed together in the next. The 200
// answer is a JSON object:
//
//	{
//	  "request": 17,          the append's number
//	  "messages": 1000,       messages in the body, decoded or not
//	  "accepted": 612,        new to the database
//	  "duplicates": 301,      held already
//	  "stale": 87,            below the frontier: their times are complete
//	  "skipped": 0,           set aside under --on-error skip
//	  "quarantined": 0,       stored aside under --on-error quarantine
//	  "applied": 1000,        decoded and processed by the receiver
//	  "released": 240,        output records the messages released
//	  "first_rejection": {"source": "request 17", "line": 3, "offset": 301,
//	                      "reason": "..."}     (only when one was set aside)
//	}
//
// Errors are JSON objects too, {"error": "...", ...}, "error" in the
// words of the command line:
//
//   - 400: a message that cannot be decoded, under --on-error fail ("error"
//     is the position-bearing message of cdclog ingest, "position" its
//     place); a msgpack body that cannot be framed, under any policy; a
//     message the receiver refuses (invalid, or a naive stream's finish).
//     A body that cannot be decoded is refused whole: nothing of it is
//     applied.
//   - 409: a protocol violation under --on-error fail. "error" names both
//     messages, "violation" gives the kind, the time, each message and its
//     position; the messages before the offending one are committed, and
//     "result" counts them (as cdclog ingest commits what it read before
//     a violation). Re-sending is harmless: what was committed comes back
//     as duplicates.
//   - 408: a body that stalled: no byte of it came for
//     Options.BodyTimeout (30 s by default); nothing is applied, and the
//     room it held under MaxInFlight goes to the appends behind it.
//   - 413: a body over Options.MaxBody (Content-Length is checked before
//     reading, the body itself as it is read); nothing is applied.
//   - 415: a Content-Type or Content-Encoding that is not supported.
//   - 503: the processor has stopped (a storage failure) or is shutting
//     down.
//   - 404: an unknown path; 405: a method the path does not take (with
//     Allow).
//
// # Reading the output
//
// GET /v1/output?from=SEQ[&limit=N][&wait=DURATION] returns the committed
// output records from sequence number SEQ on (default 1: the first
// record), as JSON Lines (application/x-ndjson), each record's message in
// the primary JSON form with its sequence number first:
//
//	{"seq":1,"update":{"data":{"id":1},"time":0,"diff":1}}
//	{"seq":2,"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}
//
// Removing `"seq":N,` from a line gives the line cdclog demangle and
// cdclog ingest write. The header Cdclog-Output-End carries the sequence
// number the next record would get when the response began.
//
// Without limit the response is a stream: it stays open and carries each
// record as it is committed, flushed whenever it has caught up with the
// committed output, until the client goes away or the server shuts down
// (a clean end). With limit it is a long poll: it waits up to wait
// (default 0, at most MaxWait; Go's duration syntax, "5s") for at least
// one record and returns at most limit, without waiting for more; none
// when the wait ends first (an empty 200). wait without limit is 400. A
// SEQ past the end waits for the record to be committed. A consumer that
// keeps the last sequence number it applied, in its own transaction, and
// asks from the next, applies every record exactly once.
//
// The output log is kept whole unless cdclog gc is told otherwise
// (--retain-output): when the records from SEQ on are no longer all
// there, the answer is 410 Gone, naming the first record kept. A stream
// or long poll whose reader falls so far behind that gc drops the records
// it was about to be sent is cut off (a broken response, and a warning in
// the server's log), and the reader's next request is that 410.
//
// # The rest
//
// GET /v1/status is the processor's status as of its last commit: the
// JSON of 'cdclog inspect status --json', the same fields and types.
// GET /healthz is {"status":"ok"} (200) while the processor runs, and 503
// with the error once it has stopped after a storage failure or while it
// shuts down. GET /metrics is Options.Metrics (package metrics) when set.
// GET paths take HEAD too, answered with the status and headers GET
// would have (for /v1/output, 410 when SEQ is no longer kept).
//
// # Shutting down
//
// Serve runs until its context ends, then stops accepting connections,
// ends the output streams cleanly and waits for the requests in flight
// (up to Options.ShutdownGrace): every append it has read the body of is
// answered once committed. An output response whose client does not take
// its last bytes within 5 s of the shutdown (a client that has stopped
// reading) is cut off there, a broken response, rather than hold the
// shutdown up: the client resumes after the last whole record it read.
// Closing the processor then is the caller's.
package server
