package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// outputQuery is a parsed /v1/output query.
type outputQuery struct {
	from uint64
	// limit is 0 for a stream; otherwise at most that many records are
	// returned, after waiting up to wait for the first.
	limit uint64
	wait  time.Duration
}

// parseOutputQuery reads from, limit and wait, refusing anything else.
func parseOutputQuery(r *http.Request) (outputQuery, error) {
	q := outputQuery{from: 1}
	// r.URL.Query drops what it cannot parse (a ';' separator, a bad
	// escape): a query that is not read as written is refused, or a
	// consumer would be sent from the first record.
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return q, fmt.Errorf("malformed query %q: %v (separate parameters with &)", r.URL.RawQuery, err)
	}
	for name, vs := range vals {
		if len(vs) != 1 {
			return q, fmt.Errorf("parameter %s is given %d times", name, len(vs))
		}
		v := vs[0]
		var err error
		switch name {
		case "from":
			q.from, err = parseCount(v)
			if err == nil && q.from == 0 {
				err = errors.New("sequence numbers start at 1")
			}
		case "limit":
			q.limit, err = parseCount(v)
			if err == nil && q.limit == 0 {
				err = errors.New("must be at least 1")
			}
		case "wait":
			q.wait, err = time.ParseDuration(v)
			if err != nil {
				err = errors.New("not a duration in Go's syntax (500ms, 5s, 1m)")
			} else if q.wait < 0 || q.wait > MaxWait {
				err = fmt.Errorf("must be from 0 to %v", MaxWait)
			}
		default:
			return q, fmt.Errorf("unknown parameter %s (the parameters are from, limit and wait)", name)
		}
		if err != nil {
			return q, fmt.Errorf("parameter %s=%s: %v", name, v, err)
		}
	}
	if vals.Has("wait") && q.limit == 0 {
		return q, errors.New("parameter wait needs limit: without limit the output is a stream, held open for new records")
	}
	return q, nil
}

// parseCount reads a sequence number or a limit: a decimal number of at
// most 64 bits, refused in the API's words rather than strconv's.
func parseCount(v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("too large: at most %d", uint64(math.MaxUint64))
	case err != nil:
		return 0, errors.New("not a whole number (decimal digits only)")
	}
	return n, nil
}

// serveOutput is GET /v1/output: the committed output records from
// "from" on, as JSON Lines, each with its "seq". Without limit it is a
// stream that stays open for new records (flushed once caught up with
// the committed output); with limit it waits up to wait for a first
// record and returns at most limit, without waiting for more.
func (s *Server) serveOutput(w http.ResponseWriter, r *http.Request) {
	q, err := parseOutputQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, errorBody{Error: "/v1/output: " + err.Error()})
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	defer s.drainOnStop(w)()
	if q.limit > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, q.wait)
		defer stop()
	}
	ow := &outputWriter{w: w, end: s.p.OutputEnd()}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cdclog-Output-End", strconv.FormatUint(ow.end, 10))
	if r.Method == http.MethodHead {
		// The status GET would answer with, without running the query.
		if first := s.p.OutputStart(); q.from < first {
			writeGone(w, q.from, first)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if q.limit == 0 && q.from >= ow.end {
		ow.start() // nothing to send yet: the client learns the stream is open
	}
	var n uint64
	for rec, err := range s.p.Output(ctx, q.from) {
		if err != nil {
			ow.finish(s, err)
			return
		}
		n++
		caughtUp, err := ow.record(s.p, &rec)
		if err != nil {
			return // the client went away
		}
		if q.limit > 0 && (n == q.limit || caughtUp) {
			break
		}
	}
	ow.flush()
}

// drainOnStop bounds the writes of an output response from EndStreams on
// (Options.StreamDrain), the end of the response included, and returns the
// function to call when the handler returns: after it, the deadline is
// not set any more, so that it cannot fall on the connection's next
// response (net/http clears it once a response is finished).
func (s *Server) drainOnStop(w http.ResponseWriter) func() {
	rc := http.NewResponseController(w)
	set := make(chan struct{})
	stop := context.AfterFunc(s.stop, func() {
		defer close(set)
		rc.SetWriteDeadline(time.Now().Add(s.o.StreamDrain))
	})
	return func() {
		if !stop() {
			<-set
		}
	}
}

// outputWriter writes records to a response, buffered, flushing each
// time it has caught up with the committed output.
type outputWriter struct {
	w       http.ResponseWriter
	bw      *bufio.Writer
	buf     []byte
	end     uint64 // the output end as last read
	started bool
}

// start sends the status and headers.
func (ow *outputWriter) start() {
	if !ow.started {
		ow.started = true
		ow.w.WriteHeader(http.StatusOK)
		ow.bw = bufio.NewWriterSize(ow.w, 64<<10)
		http.NewResponseController(ow.w).Flush()
	}
}

// record writes one record and flushes when no committed record follows
// it; it reports whether it had caught up.
func (ow *outputWriter) record(p *recovery.Processor, rec *recovery.Record) (bool, error) {
	ow.start()
	ow.buf = appendRecord(ow.buf[:0], rec)
	if _, err := ow.bw.Write(ow.buf); err != nil {
		return false, err
	}
	if rec.Seq+1 < ow.end {
		return false, nil
	}
	if ow.end = p.OutputEnd(); rec.Seq+1 < ow.end {
		return false, nil
	}
	return true, ow.flush()
}

// flush sends what is buffered.
func (ow *outputWriter) flush() error {
	ow.start()
	if err := ow.bw.Flush(); err != nil {
		return err
	}
	return http.NewResponseController(ow.w).Flush()
}

// finish ends the response after the output iterator's error: the end
// of a wait, a shutdown or a closed processor end it cleanly; any other
// error (the output log cannot be read) aborts it, so that the client
// sees a broken response rather than a complete one.
func (ow *outputWriter) finish(s *Server, err error) {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, recovery.ErrClosed):
		ow.flush()
		return
	}
	if d := (*recovery.OutputDroppedError)(nil); errors.As(err, &d) {
		if !ow.started {
			// gc dropped the records asked for (cdclog gc --retain-output):
			// Output says so before it yields any record.
			writeGone(ow.w, d.From, d.First)
			return
		}
		// gc's retention dropped the records this response was about to
		// send: the reader fell behind it, the log is sound. The response
		// is cut off, and the client's next request is answered 410.
		s.log.Warn("/v1/output: a reader fell behind gc's retention (--retain-output), which dropped the records it was about to be sent; its response is cut off, and its next request is answered 410",
			"record", d.From, "first_kept", d.First)
		ow.flush()
		panic(http.ErrAbortHandler)
	}
	s.log.Error("/v1/output: read the output log", "err", err)
	if !ow.started {
		writeError(ow.w, http.StatusInternalServerError, errorBody{Error: "/v1/output: " + err.Error()})
		return
	}
	ow.flush()
	panic(http.ErrAbortHandler)
}

// writeGone answers 410: record from is no longer kept, the output log
// starts at record first.
func writeGone(w http.ResponseWriter, from, first uint64) {
	writeError(w, http.StatusGone, errorBody{Error: fmt.Sprintf(
		"/v1/output: record %d is no longer kept: the output log starts at record %d", from, first)})
}

// appendRecord appends a record as one line: its message in the primary
// JSON form with "seq" first, {"seq":17,"update":{...}}. Removing
// `"seq":17,` gives the line that cdclog demangle writes.
func appendRecord(dst []byte, rec *recovery.Record) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, rec.Seq, 10)
	dst = append(dst, ',')
	start := len(dst)
	dst = cdc.AppendJSON(dst, &rec.Msg)
	// AppendJSON's object starts with '{', which the "seq" prefix
	// replaces.
	copy(dst[start:], dst[start+1:])
	dst = dst[:len(dst)-1]
	return append(dst, '\n')
}
