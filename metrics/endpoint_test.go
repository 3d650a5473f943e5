package metrics

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"testing"
)

func TestListenServesUntilCloseAndNoAddressIsANilEndpointThatDoesNothing(t *testing.T) {
	none, err := Listen("", nil)
	if none != nil || err != nil {
		t.Fatalf("Listen(\"\") = %v, %v; want nil, nil", none, err)
	}
	if none.Observer() != nil {
		t.Error("a nil Endpoint's Observer is not nil")
	}
	none.Watch(nil, nil)
	none.Close()

	if _, err := Listen("nowhere", slog.New(slog.DiscardHandler)); !errors.Is(err, ErrAddress) {
		t.Errorf("Listen(nowhere) = %v, want ErrAddress", err)
	}
	var log bytes.Buffer
	e, err := Listen("127.0.0.1:0", slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if e.Observer() == nil {
		t.Error("a served Endpoint has no Observer")
	}
	url := regexp.MustCompile(`url=(\S+)`).FindStringSubmatch(log.String())
	if url == nil {
		t.Fatalf("log %q: no URL", log.String())
	}
	if fams := scrape(t, url[1]); fams["cdclog_commits_total"] == nil {
		t.Fatal("no cdclog_commits_total in the scrape")
	}
	e.Close()
	if _, err := http.Get(url[1]); err == nil {
		t.Fatal("still answering after Close")
	}
}
