package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
)

// Server answers on a database's control socket for the processor that
// holds it.
type Server struct {
	p    *recovery.Processor
	path string
	ln   net.Listener
	srv  *http.Server
	sock os.FileInfo // the socket file as created, to remove only it
	done chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Listen creates the control socket of the database at db (see
// SocketPath) and answers on it for p until Close.
func Listen(db string, p *recovery.Processor, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	path, err := SocketPath(db)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln, err := listen(path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	s := &Server{p: p, path: path, ln: ln, done: make(chan struct{})}
	s.sock, _ = os.Lstat(path)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", s.info)
	mux.HandleFunc("GET /v1/status", s.status)
	mux.HandleFunc("GET /v1/pending", s.pending)
	mux.HandleFunc("GET /v1/records", s.records)
	mux.HandleFunc("GET /v1/wal", s.wal)
	mux.HandleFunc("GET /v1/quarantine", s.quarantine)
	mux.HandleFunc("GET /v1/consumers", s.consumers)
	mux.HandleFunc("GET /v1/cursors", s.cursors)
	mux.HandleFunc("POST /v1/gc", s.gc)
	mux.HandleFunc("POST /v1/consumers/delete", s.deleteConsumer)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("control socket stopped", "socket", path, "err", err)
		}
	}()
	log.Debug("answering on the control socket", "socket", path)
	return s, nil
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops answering, waiting up to a few seconds for answers in
// progress, and removes the socket. Once closed, Close returns the first
// call's result; a nil Server (none could be made) does nothing.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	if fi, serr := os.Lstat(s.path); serr == nil && s.sock != nil && os.SameFile(fi, s.sock) {
		os.Remove(s.path)
	}
	return err
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, errorBody{Error: err.Error()})
}

// reader opens a Reader for one request; it fails the request when the
// processor is closing or has failed.
func (s *Server) reader(w http.ResponseWriter) *recovery.Reader {
	r, err := s.p.Reader()
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err)
		return nil
	}
	return r
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	r := s.reader(w)
	if r == nil {
		return
	}
	defer r.Close()
	f, complete := r.Frontier()
	writeJSON(w, http.StatusOK, Info{PID: os.Getpid(), DB: s.dbPath(), OutputEnd: r.OutputEnd(),
		OutputStart: r.OutputStart(), Frontier: f, Complete: complete, WALFloor: r.WALFloor()})
}

func (s *Server) dbPath() string {
	st, err := s.p.Status()
	if err != nil {
		return ""
	}
	return st.Path
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	st, err := s.p.Status()
	if err != nil {
		fail(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) pending(w http.ResponseWriter, _ *http.Request) {
	r := s.reader(w)
	if r == nil {
		return
	}
	defer r.Close()
	sw := newScanWriter[demangle.PendingTime](w)
	sw.end(r.ScanPending(sw.item))
}

func (s *Server) records(w http.ResponseWriter, req *http.Request) {
	from, ok := uintParam(w, req, "from", 1)
	if !ok {
		return
	}
	r := s.reader(w)
	if r == nil {
		return
	}
	defer r.Close()
	sw := newScanWriter[recovery.Record](w)
	sw.end(r.Records(from, sw.item))
}

func (s *Server) wal(w http.ResponseWriter, req *http.Request) {
	from, ok := uintParam(w, req, "from", 0)
	if !ok {
		return
	}
	to, ok := uintParam(w, req, "to", math.MaxUint64)
	if !ok {
		return
	}
	r := s.reader(w)
	if r == nil {
		return
	}
	defer r.Close()
	sw := newScanWriter[recovery.WALEntry](w)
	sw.end(r.WAL(from, to, sw.item))
}

func (s *Server) quarantine(w http.ResponseWriter, _ *http.Request) {
	r := s.reader(w)
	if r == nil {
		return
	}
	defer r.Close()
	sw := newScanWriter[recovery.QuarantineRecord](w)
	sw.end(r.Quarantine(sw.item))
}

// consumers lists the registered consumers, with which the processor
// has open.
func (s *Server) consumers(w http.ResponseWriter, _ *http.Request) {
	list, err := s.p.Consumers()
	if errors.Is(err, recovery.ErrClosed) {
		fail(w, http.StatusServiceUnavailable, err)
		return
	}
	newScanWriter[recovery.ConsumerInfo](w).all(list, err)
}

// cursors answers the committed producer cursors (input positions, a
// broker sink's position), by name; JSON carries the values as base64.
func (s *Server) cursors(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.p.Cursors())
}

// uintParam reads an unsigned query parameter, def when absent.
func uintParam(w http.ResponseWriter, req *http.Request, name string, def uint64) (uint64, bool) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("%s=%q: %w", name, v, err))
		return 0, false
	}
	return n, true
}

// gc runs Processor.GC: the WAL below the frontier (less keep_wal times)
// and the output that retain allows and nothing needs are dropped while
// the processor runs; the file is not compacted.
func (s *Server) gc(w http.ResponseWriter, req *http.Request) {
	keep, ok := uintParam(w, req, "keep_wal", 0)
	if !ok {
		return
	}
	retain, err := recovery.ParseRetention(req.URL.Query().Get("retain"))
	if err != nil {
		fail(w, http.StatusBadRequest, fmt.Errorf("retain: %w", err))
		return
	}
	res, err := s.p.GC(req.Context(), recovery.GCOptions{KeepTimes: keep, RetainOutput: retain})
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// deleteConsumer runs Processor.DeleteConsumer.
func (s *Server) deleteConsumer(w http.ResponseWriter, req *http.Request) {
	name := req.URL.Query().Get("name")
	if name == "" {
		fail(w, http.StatusBadRequest, errors.New("name is missing"))
		return
	}
	if err := s.p.DeleteConsumer(req.Context(), name); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, recovery.ErrConsumerBusy) || errors.Is(err, recovery.ErrConsumerNotFound) {
			code = http.StatusConflict
		}
		fail(w, code, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Deleted string `json:"deleted"`
	}{name})
}
