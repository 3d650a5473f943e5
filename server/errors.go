package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// errorBody is every error response: "error" says what is wrong in the
// CLI's words; an append's error adds what the request did before it.
type errorBody struct {
	Error string `json:"error"`
	// Request numbers the append, as its positions do ("request 17").
	Request uint64 `json:"request,omitempty"`
	// Position is where in the body the bad message was.
	Position *position `json:"position,omitempty"`
	// Violation details a protocol violation (409).
	Violation *violation `json:"violation,omitempty"`
	// Result says what the append did with the messages before the bad
	// one (409 and 400 after the receiver refused a message): they are
	// committed.
	Result *appendResult `json:"result,omitempty"`
	// Limit is the body limit in bytes (413).
	Limit int64 `json:"limit,omitempty"`
}

// position is a cdc.Pos in JSON: the source ("request 17"), the 1-based
// line (JSON Lines; absent for msgpack) and the byte offset in the body.
type position struct {
	Source string `json:"source"`
	Line   int64  `json:"line,omitempty"`
	Offset int64  `json:"offset"`
}

func positionOf(p cdc.Pos) *position {
	return &position{Source: p.Source, Line: p.Line, Offset: p.Offset}
}

// violation is a *demangle.ViolationError in JSON: its kind, the time
// the two messages disagree about (a decimal string, as times are in
// /v1/status), and both messages with their positions.
type violation struct {
	Kind      string          `json:"kind"`
	Time      string          `json:"time"`
	Message   json.RawMessage `json:"message"`
	At        *position       `json:"at"`
	Earlier   json.RawMessage `json:"earlier"`
	EarlierAt *position       `json:"earlier_at"`
	Detail    string          `json:"detail"`
}

func violationOf(v *demangle.ViolationError) *violation {
	return &violation{Kind: v.Kind.String(), Time: strconv.FormatUint(v.Time, 10),
		Message: cdc.AppendJSON(nil, &v.Msg), At: positionOf(v.At),
		Earlier: cdc.AppendJSON(nil, &v.Earlier), EarlierAt: positionOf(v.EarlierAt), Detail: v.Detail}
}

// writeError writes an error response.
func writeError(w http.ResponseWriter, status int, body errorBody) {
	writeJSON(w, status, body)
}

// writeJSON writes v as an indented JSON document (as inspect --json
// does), with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		enc.Encode(errorBody{Error: "encode the response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// errTooLarge reports whether err is http.MaxBytesReader's.
func errTooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}
