package metrics

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// listenLogged runs ListenAndServe on addr with metrics that log to the
// returned buffer.
func listenLogged(t *testing.T, addr string) (*Metrics, *bytes.Buffer, func()) {
	t.Helper()
	var log bytes.Buffer
	m := New(slog.New(slog.NewTextHandler(&log, nil)))
	stop, err := m.ListenAndServe(addr)
	if err != nil {
		t.Fatal(err)
	}
	return m, &log, stop
}

func TestListenAndServeLogsTheURLAndServesThereUntilStopped(t *testing.T) {
	_, log, stop := listenLogged(t, "127.0.0.1:0")
	url := regexp.MustCompile(`url=(\S+)`).FindStringSubmatch(log.String())
	if url == nil || strings.Contains(log.String(), "WARN") {
		t.Fatalf("log %q: want the URL and no warning on loopback", log.String())
	}
	if fams := scrape(t, url[1]); fams["cdclog_commits_total"] == nil {
		t.Fatal("no cdclog_commits_total in the scrape")
	}
	stop()
	if _, err := http.Get(url[1]); err == nil {
		t.Fatal("still answering after stop")
	}
}

func TestListenAndServeWarnsOfAWideAddressAndRefusesABadOne(t *testing.T) {
	m, log, stop := listenLogged(t, "0.0.0.0:0")
	stop()
	if !strings.Contains(log.String(), "level=WARN msg=\"metrics are served beyond the loopback interface, without authentication\"") {
		t.Errorf("log %q: want a warning for 0.0.0.0", log.String())
	}
	if _, err := m.ListenAndServe("nowhere"); !errors.Is(err, ErrAddress) {
		t.Errorf("ListenAndServe(nowhere) = %v, want ErrAddress", err)
	}
}
