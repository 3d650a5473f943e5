package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/cdclog/cdclog/internal/listen"
)

// ErrAddress is wrapped by ListenAndServe's error for an address that is
// not HOST:PORT, :PORT or PORT.
var ErrAddress = listen.ErrAddress

// ListenAndServe listens on addr and serves the metrics there, as Serve
// does, until the returned stop is called. An address without a host
// (":PORT", or "PORT") is the loopback interface only, unlike for
// net.Listen: the endpoint has no authentication, so a wider address
// ("0.0.0.0:PORT") should be a decision, and it is logged as a warning.
// It logs the metrics' URL once it listens. A port in use is an error
// naming the address; an addr that is not one wraps ErrAddress. It is
// what `cdclog ingest --metrics ADDR` runs.
func (m *Metrics) ListenAndServe(addr string) (stop func(), err error) {
	ln, err := listen.TCP(addr)
	if err != nil {
		return nil, err // listen.TCP's names the address
	}
	if listen.Wide(ln.Addr().String()) {
		m.log.Warn("metrics are served beyond the loopback interface, without authentication", "addr", ln.Addr().String())
	}
	m.log.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return m.Serve(ln), nil
}

// Serve answers GET /metrics on ln (404 on any other path) on a goroutine
// of its own, until the returned stop is called; stop closes ln and waits
// up to a second for the scrapes in flight. It is what `cdclog ingest
// --metrics ADDR` runs.
func (m *Metrics) Serve(ln net.Listener) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			m.log.Warn("metrics: serving stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
		<-served
	}
}
