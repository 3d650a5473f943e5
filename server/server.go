package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"golang.org/x/sync/semaphore"
)

// DefaultMaxBody is the default limit on an append's body: 64 MiB.
const DefaultMaxBody = 64 << 20

// MaxWait is the longest wait /v1/output accepts.
const MaxWait = 5 * time.Minute

// DefaultShutdownGrace is how long Serve waits, once its context ends, for
// the requests in flight before it closes their connections.
const DefaultShutdownGrace = 30 * time.Second

// DefaultStreamDrain is how long an output response has, once EndStreams
// is called, to have its last bytes taken by its client.
const DefaultStreamDrain = 5 * time.Second

// DefaultBodyTimeout is how long an append body may go without bringing
// a byte before the append is refused with 408 (Options.BodyTimeout).
const DefaultBodyTimeout = 30 * time.Second

// LogSource is the source name the write-ahead log records for appended
// messages (see recovery.Request.LogSource): every request is logged
// under it, with the line and offset within its body.
const LogSource = "http"

// Options configure a Server. The zero value works: a 64 MiB body limit,
// JSON Lines for a body that does not say its format, no /metrics,
// slog's default logger.
type Options struct {
	// MaxBody is the largest append body accepted, in bytes; a larger
	// one is refused with 413 and nothing of it is applied. Zero means
	// DefaultMaxBody.
	MaxBody int64
	// MaxInFlight bounds the bytes of append bodies held at once (read,
	// decoded, and waiting for their commit), which bounds the memory
	// that concurrent appends take: an append waits for room before it
	// reads its body, counting its Content-Length, or MaxBody when it
	// gives none. Zero means 8 × MaxBody (512 MiB by default); it is never
	// less than MaxBody.
	MaxInFlight int64
	// Format is the format of an append body whose Content-Type names
	// none (see the package documentation).
	Format cdc.Format
	// Metrics, when set, serves /metrics.
	Metrics http.Handler
	// BodyTimeout bounds the wait for each read of an append's body: a
	// client that stalls mid-body for longer is answered 408 and nothing
	// of its body is applied, so that it does not hold its share of
	// MaxInFlight (and the appends behind it) for ever. Zero means
	// DefaultBodyTimeout. It needs a net/http server (Serve's, or the
	// caller's own) to set the connection's read deadline; without one
	// the body is read as it comes.
	BodyTimeout time.Duration
	// ShutdownGrace bounds Serve's wait for the requests in flight once
	// its context ends; zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// StreamDrain is how long an output response has, once EndStreams is
	// called, to have its last bytes taken by its client, which would
	// otherwise block the response's writes, and a shutdown, until
	// ShutdownGrace when it has stopped reading; zero means
	// DefaultStreamDrain.
	StreamDrain time.Duration
	// Logger receives the server's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Status, when set, gives the body of /v1/status, encoded as JSON
	// (cdclog serve passes inspect.ReadStatus, so that the answer is that
	// of 'cdclog inspect status --json', broker positions included); nil
	// serves the processor's recovery.Status.
	Status func() (any, error)
}

// Server is the HTTP front of a recovery.Processor (see the package
// documentation for the API). It is an http.Handler; Serve runs it on a
// listener. Its methods are safe for concurrent use.
type Server struct {
	p    *recovery.Processor
	o    Options
	log  *slog.Logger
	seen atomic.Uint64 // appends numbered so far: the last request's number
	// room is the budget of append body bytes held at once (MaxInFlight).
	room *semaphore.Weighted

	// stop ends the output streams (EndStreams).
	stop     context.Context
	stopFunc context.CancelFunc

	mu    sync.Mutex
	stats Stats
}

// Stats counts what a Server's appends did.
type Stats struct {
	// Appends counts the append requests answered 200; Refused those
	// answered with an error status.
	Appends uint64
	Refused uint64
	// Unanswered counts the appends whose client went away while they
	// were in the pipeline: what they did all the same is in Messages and
	// Totals (a request is not withdrawn by its client leaving).
	Unanswered uint64
	// Messages counts the messages decoded from appended bodies, and
	// Totals what became of them.
	Messages uint64
	Totals   recovery.Result
}

// New returns a Server in front of p, which stays the caller's to close
// (after Serve has returned). Options that Validate refuses are returned
// as its *cdc.OptionError, and no Server.
func New(p *recovery.Processor, o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 8 * o.MaxBody
	}
	o.MaxInFlight = max(o.MaxInFlight, o.MaxBody)
	if o.Status == nil {
		o.Status = func() (any, error) { return p.Status() }
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.StreamDrain <= 0 {
		o.StreamDrain = DefaultStreamDrain
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{p: p, o: o, log: o.Logger, room: semaphore.NewWeighted(o.MaxInFlight)}
	s.stop, s.stopFunc = context.WithCancel(context.Background())
	return s, nil
}

// route is one path of the API: the method it takes and its handler.
type route struct {
	method  string
	handler func(*Server, http.ResponseWriter, *http.Request)
}

var routes = map[string]route{
	"/v1/append": {http.MethodPost, (*Server).serveAppend},
	"/v1/output": {http.MethodGet, (*Server).serveOutput},
	"/v1/status": {http.MethodGet, (*Server).serveStatus},
	"/healthz":   {http.MethodGet, (*Server).serveHealth},
	"/metrics":   {http.MethodGet, (*Server).serveMetrics},
}

// ServeHTTP routes a request: 404 for an unknown path, 405 (with Allow)
// for a method the path does not take; GET paths take HEAD too.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := routes[r.URL.Path]
	if !ok || r.URL.Path == "/metrics" && s.o.Metrics == nil {
		writeError(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no such path %s (the API is /v1/append, /v1/output, /v1/status, /metrics, /healthz)", r.URL.Path)})
		return
	}
	if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
		allow := rt.method
		if rt.method == http.MethodGet {
			allow += ", " + http.MethodHead
		}
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, errorBody{Error: fmt.Sprintf("%s takes %s, not %s", r.URL.Path, allow, r.Method)})
		return
	}
	rt.handler(s, w, r)
}

// EndStreams ends every /v1/output response in progress, cleanly (a
// client resumes from the record after the last it read), and makes
// later ones end at once: the first step of a shutdown, since a stream
// would otherwise hold its connection open for ever. From then on an
// output response's writes have Options.StreamDrain to be taken by its
// client, after which the response is cut off.
func (s *Server) EndStreams() { s.stopFunc() }

// Stats returns what the appends have done so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Serve answers HTTP on ln until ctx ends or ln fails. When ctx ends it
// shuts down: it stops accepting connections, ends the output streams,
// and waits (up to Options.ShutdownGrace) for the requests in flight,
// so that every append it has read is answered once its messages are
// committed; then it closes what is left. It returns nil after a
// shutdown, or the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.EndStreams()
	grace, cancel := context.WithTimeout(context.Background(), s.o.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(grace)
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("shutdown: requests still in flight after the grace period; closing their connections",
			"grace", s.o.ShutdownGrace)
		err = hs.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// streamContext returns the context of a response that lasts: it ends
// with the request or at EndStreams.
func (s *Server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.stop, cancel)
	return ctx, func() { stop(); cancel() }
}

// serveMetrics serves Options.Metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) { s.o.Metrics.ServeHTTP(w, r) }

// LogAttrs are the log fields of what the appends did: appends, refused,
// unanswered, messages, then what became of the messages (recovery.Result.LogAttrs),
// as cdclog serve logs them when it stops.
func (s *Stats) LogAttrs() []slog.Attr {
	return append([]slog.Attr{slog.Uint64("appends", s.Appends), slog.Uint64("refused", s.Refused),
		slog.Uint64("unanswered", s.Unanswered), slog.Uint64("messages", s.Messages)}, s.Totals.LogAttrs()...)
}
