package server

import (
	"net/http"
)

// serveStatus is GET /v1/status: Options.Status's answer, by default the
// processor's recovery.Status in the JSON form of 'cdclog inspect status
// --json' (recovery.Status's MarshalJSON, indented the same way).
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.o.Status()
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, errorBody{Error: "read status: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// health is the answer of /healthz.
type health struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// serveHealth is GET /healthz: 200 while the processor runs, 503 once it
// has stopped (a storage failure, or a shutdown under way), with why.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if err := s.p.Err(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "stopped", Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, health{Status: "ok"})
}
