package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
)

// appendResult is the answer to an append: what became of its messages.
type appendResult struct {
	Request uint64 `json:"request"`
	// Messages counts the body's messages, decoded or not.
	Messages    int `json:"messages"`
	Accepted    int `json:"accepted"`
	Duplicates  int `json:"duplicates"`
	Stale       int `json:"stale"`
	Skipped     int `json:"skipped"`
	Quarantined int `json:"quarantined"`
	// Applied counts the decoded messages the receiver processed: all of
	// them, but under --on-error fail only those before the refused one.
	// Messages that could not be decoded (skipped or quarantined before
	// they reach the receiver) are not among them.
	Applied int `json:"applied"`
	// Released counts the output records that the request's messages
	// released.
	Released int `json:"released"`
	// FirstRejection is the first message skipped or quarantined.
	FirstRejection *rejection `json:"first_rejection,omitempty"`

	res recovery.Result // what it was made from, for Stats
}

// rejection is a message set aside: where it was and why.
type rejection struct {
	position
	Reason string `json:"reason"`
}

func resultOf(n uint64, messages int, res *recovery.Result, decoded []cdc.Reject) *appendResult {
	a := &appendResult{Request: n, Messages: messages, Accepted: res.Accepted, Duplicates: res.Duplicates,
		Stale: res.Stale, Skipped: res.Skipped, Quarantined: res.Quarantined, Applied: res.Applied,
		Released: res.Output, res: *res}
	// The processor names the first message it set aside, or else the
	// first undecodable input; the first in the body is the earlier of
	// that and the first undecodable input.
	first := res.Rejected
	if len(decoded) > 0 && (first == nil || decoded[0].Pos.Offset < first.Pos.Offset) {
		first = &decoded[0]
	}
	if first != nil {
		a.FirstRejection = &rejection{position: *positionOf(first.Pos), Reason: first.Reason}
	}
	return a
}

// serveAppend is POST /v1/append: it decodes the whole body, submits its
// messages as one request and answers once they are committed.
func (s *Server) serveAppend(w http.ResponseWriter, r *http.Request) {
	n := s.seen.Add(1)
	status, body := s.appendBody(w, r, n)
	s.count(status, body)
	if status == http.StatusOK {
		writeJSON(w, status, body.Result)
		return
	}
	if status != 0 {
		writeError(w, status, body)
	}
}

// appendBody runs append number n and returns the status and, for an
// error, its body (for 200, the result is in body.Result). Status 0 means
// the client went away: there is no one to answer.
func (s *Server) appendBody(w http.ResponseWriter, r *http.Request, n uint64) (int, errorBody) {
	fail := func(status int, format string, args ...any) (int, errorBody) {
		return status, errorBody{Error: fmt.Sprintf(format, args...), Request: n}
	}
	if r.URL.RawQuery != "" {
		// /v1/append has no parameters: one misspelt or meant for
		// another endpoint would otherwise be ignored without a word.
		return fail(http.StatusBadRequest, "request %d: /v1/append takes no parameters, got %q; nothing of it is applied", n, r.URL.RawQuery)
	}
	format, err := s.bodyFormat(r)
	if err != nil {
		return fail(http.StatusUnsupportedMediaType, "%v", err)
	}
	if r.ContentLength > s.o.MaxBody {
		st, b := fail(http.StatusRequestEntityTooLarge, "request %d: the body is %d bytes, over the limit of %d (--max-body)", n, r.ContentLength, s.o.MaxBody)
		b.Limit = s.o.MaxBody
		return st, b
	}
	held := r.ContentLength
	if held <= 0 {
		held = s.o.MaxBody
	}
	if err := s.room.Acquire(r.Context(), held); err != nil {
		return 0, errorBody{} // the client went away while waiting
	}
	// The processor refers to the messages until they are committed, or
	// the request has failed: room is given back once Wait has said so.
	release := func() { s.room.Release(held) }
	req, status, eb := s.decode(w, r, format, n)
	if status != 0 {
		release()
		return status, eb
	}
	messages := len(req.Msgs) + len(req.Rejects)
	pend, err := s.p.Submit(r.Context(), req)
	if err != nil {
		release()
		return s.submitError(err, n, nil)
	}
	res, err := pend.Wait(r.Context())
	if r.Context().Err() != nil && err != nil {
		// The client went away while the request was in the pipeline:
		// the room is given back, and what it did counted, once it is
		// done.
		go func() {
			<-pend.Done()
			release()
			res, _ := pend.Wait(context.Background())
			s.count(0, errorBody{Result: resultOf(n, messages, &res, req.Rejects)})
		}()
		return 0, errorBody{}
	}
	release()
	if err != nil {
		return s.submitError(err, n, resultOf(n, messages, &res, req.Rejects))
	}
	return http.StatusOK, errorBody{Result: resultOf(n, messages, &res, req.Rejects)}
}

// submitError turns the error of a submitted request into its answer.
func (s *Server) submitError(err error, n uint64, res *appendResult) (int, errorBody) {
	var v *demangle.ViolationError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return 0, errorBody{}
	case errors.As(err, &v):
		return http.StatusConflict, errorBody{Error: err.Error(), Request: n, Position: positionOf(v.At),
			Violation: violationOf(v), Result: res}
	case errors.Is(err, recovery.ErrClosed):
		return http.StatusServiceUnavailable, errorBody{Error: "the server is shutting down: " + err.Error(), Request: n}
	case errors.Is(err, recovery.ErrFailed), errors.Is(err, recovery.ErrLiveOutput):
		return http.StatusServiceUnavailable, errorBody{Error: err.Error(), Request: n}
	}
	// The receiver refused a message it cannot take (an invalid one, a
	// naive stream's finish), or data that is not JSON.
	return http.StatusBadRequest, errorBody{Error: err.Error(), Request: n, Result: res}
}

// decode reads the whole body into a request: its messages with their
// positions in "request n", and under policy skip or quarantine what it
// could not decode. A body over the limit is 413; under policy fail, the
// first undecodable message is 400 (as is an undecodable msgpack body
// under any policy: the rest of it cannot be framed). Nothing of a
// refused body is applied.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, f cdc.Format, n uint64) (recovery.Request, int, errorBody) {
	idle := &idleBody{r: r.Body, rc: http.NewResponseController(w), timeout: s.o.BodyTimeout}
	defer idle.done()
	body := &limitedBody{r: http.MaxBytesReader(w, idle, s.o.MaxBody)}
	rd := cdc.NewReader(body, f, "request "+strconv.FormatUint(n, 10))
	policy := s.p.Policy()
	req := recovery.Request{LogSource: LogSource}
	if n := min(r.ContentLength/minLine, maxPresize); n > 0 {
		// Growing them as the body is decoded took a sixth of serve's
		// CPU (CPU profile, 8 producers of 1,000-line appends).
		req.Msgs, req.Pos = make([]cdc.Message, 0, n), make([]cdc.Pos, 0, n)
	}
	for {
		var m cdc.Message
		err := rd.Next(&m)
		if err == nil {
			req.Msgs, req.Pos = append(req.Msgs, m), append(req.Pos, rd.Pos())
			continue
		}
		var de *cdc.DecodeError
		switch {
		case err == io.EOF:
			return req, 0, errorBody{}
		case errors.Is(body.err, os.ErrDeadlineExceeded):
			return req, http.StatusRequestTimeout, errorBody{
				Error:   fmt.Sprintf("request %d: the body stalled: no byte came for %v; nothing of it is applied", n, s.o.BodyTimeout),
				Request: n}
		case errTooLarge(body.err):
			return req, http.StatusRequestEntityTooLarge, errorBody{
				Error:   fmt.Sprintf("request %d: the body is over the limit of %d bytes (--max-body)", n, s.o.MaxBody),
				Request: n, Limit: s.o.MaxBody}
		case errors.As(err, &de) && !de.Fatal && policy != cdc.Fail:
			rj := rd.Reject(de)
			rj.Index = len(req.Msgs)
			req.Rejects = append(req.Rejects, rj)
		case errors.As(err, &de):
			return req, http.StatusBadRequest, errorBody{Error: de.Error(), Request: n, Position: positionOf(de.Pos)}
		default:
			return req, http.StatusBadRequest, errorBody{Error: fmt.Sprintf("request %d: read the body: %v", n, err), Request: n}
		}
	}
}

// An append's messages are allotted room for Content-Length / minLine
// messages up front, up to maxPresize (the length is the client's word).
const (
	minLine    = 48
	maxPresize = 16 << 10
)

// limitedBody keeps the body reader's last error, so that a decode error
// caused by the body limit (a msgpack message cut short by it) is told
// apart.
type limitedBody struct {
	r   io.Reader
	err error
}

// idleBody is a request body each of whose reads must bring bytes within
// timeout: before each read it moves the connection's read deadline, and
// done clears it once the body is read, so that the wait for the commit
// that follows is not cut short.
type idleBody struct {
	r       io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	set     bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	// Without a deadline to set (a handler behind another server), the
	// body is read as it comes.
	b.set = b.rc.SetReadDeadline(time.Now().Add(b.timeout)) == nil
	return b.r.Read(p)
}

func (b *idleBody) Close() error { return b.r.Close() }

func (b *idleBody) done() {
	if b.set {
		b.rc.SetReadDeadline(time.Time{})
	}
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// The media types of an append's body.
var (
	jsonlTypes   = []string{"application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/json", "text/plain"}
	msgpackTypes = []string{"application/msgpack", "application/x-msgpack", "application/vnd.msgpack"}
	// A body labelled with one of these, or with none, is in
	// Options.Format: curl -d labels any body as a form.
	unlabelled = []string{"application/octet-stream", "application/x-www-form-urlencoded"}
)

// bodyFormat returns the format of an append's body, from its
// Content-Type; an unknown type, or a Content-Encoding, is refused.
func (s *Server) bodyFormat(r *http.Request) (cdc.Format, error) {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && ce != "identity" {
		return 0, fmt.Errorf("Content-Encoding %s is not supported: send the body as it is", ce)
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return s.o.Format, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return 0, fmt.Errorf("Content-Type %q: %v", ct, err)
	}
	for _, types := range []struct {
		names []string
		f     cdc.Format
	}{{jsonlTypes, cdc.JSONL}, {msgpackTypes, cdc.Msgpack}, {unlabelled, s.o.Format}} {
		for _, t := range types.names {
			if mt == t {
				return types.f, nil
			}
		}
	}
	return 0, fmt.Errorf("Content-Type %s is not a format of cdclog: send JSON Lines (application/x-ndjson) or msgpack (application/msgpack)", mt)
}

// count adds an append to the stats: answered with status, or with
// status 0 unanswered (its client went away), when body has its result
// all the same.
func (s *Server) count(status int, body errorBody) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case status == http.StatusOK:
		s.stats.Appends++
	case status != 0:
		s.stats.Refused++
	case body.Result != nil:
		s.stats.Unanswered++
	}
	if res := body.Result; res != nil {
		s.stats.Messages += uint64(res.Messages)
		s.stats.Totals.Add(res.res)
	}
}
