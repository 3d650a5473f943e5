package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testServer is a Server on a fresh database, behind httptest.
type testServer struct {
	t   *testing.T
	p   *recovery.Processor
	s   *Server
	srv *httptest.Server
}

func newTestServer(t *testing.T, ro recovery.Options, o Options) *testServer {
	t.Helper()
	ro.Logger, o.Logger = quiet(), quiet()
	p, err := recovery.Open(filepath.Join(t.TempDir(), "state.db"), ro)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		s.EndStreams()
		srv.Close()
		p.Close()
	})
	return &testServer{t: t, p: p, s: s, srv: srv}
}

// do sends a request and returns the status and body.
func (ts *testServer) do(method, path, contentType string, body []byte) (int, []byte, http.Header) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// appendLines posts JSON Lines and decodes the answer into v (an
// *appendResult or an *errorBody).
func (ts *testServer) appendLines(lines string, v any) int {
	ts.t.Helper()
	status, b, _ := ts.do("POST", "/v1/append", "application/x-ndjson", []byte(lines))
	if err := json.Unmarshal(b, v); err != nil {
		ts.t.Fatalf("answer %d is not JSON: %v\n%s", status, err, b)
	}
	return status
}

func update(data string, t uint64, diff int64) string {
	return fmt.Sprintf(`{"update":{"data":%s,"time":%d,"diff":%d}}`+"\n", data, t, diff)
}

func progress(lower, upper uint64, counts ...uint64) string {
	var cs []string
	for i := 0; i+1 < len(counts); i += 2 {
		cs = append(cs, fmt.Sprintf(`{"time":%d,"count":%d}`, counts[i], counts[i+1]))
	}
	return fmt.Sprintf(`{"progress":{"lower":%d,"upper":%d,"counts":[%s]}}`+"\n", lower, upper, strings.Join(cs, ","))
}

func TestAppendAnswersWithWhatBecameOfTheMessages(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	body := update(`"a"`, 0, 1) + update(`"a"`, 0, 1) + update(`"b"`, 0, 1) + progress(0, 1, 0, 2)
	var res appendResult
	if st := ts.appendLines(body, &res); st != http.StatusOK {
		t.Fatalf("status %d: %+v", st, res)
	}
	want := appendResult{Request: 1, Messages: 4, Accepted: 3, Duplicates: 1, Applied: 4, Released: 3}
	if res != want {
		t.Fatalf("got %+v, want %+v", res, want)
	}
	if st := ts.appendLines(update(`"a"`, 0, 1), &res); st != http.StatusOK || res.Stale != 1 || res.Request != 2 {
		t.Fatalf("a message below the frontier: status %d, %+v; want stale 1 in request 2", st, res)
	}
	st, err := ts.p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.AcceptedUpdates != 2 || st.OutputRecords != 3 {
		t.Fatalf("status after the appends: %d updates accepted, %d records; want 2, 3", st.AcceptedUpdates, st.OutputRecords)
	}
}

func TestAnUndecodableLineIsRefusedWholeWithTheCLIsMessage(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var eb errorBody
	st := ts.appendLines(update(`"a"`, 0, 1)+`{"update":{"data":1,"time":-1,"diff":1}}`+"\n", &eb)
	if st != http.StatusBadRequest {
		t.Fatalf("status %d, want 400: %+v", st, eb)
	}
	if !strings.HasPrefix(eb.Error, "request 1:2: ") || eb.Position == nil || eb.Position.Line != 2 || eb.Request != 1 {
		t.Fatalf("error %+v: want it to name request 1, line 2", eb)
	}
	if s, _ := ts.p.Status(); s.AcceptedUpdates != 0 {
		t.Fatalf("%d updates accepted from a refused body", s.AcceptedUpdates)
	}
}

func TestAViolationUnderFailIs409NamingBothMessages(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var res appendResult
	if st := ts.appendLines(update(`"a"`, 5, 1), &res); st != http.StatusOK {
		t.Fatalf("first append: %d", st)
	}
	var eb errorBody
	st := ts.appendLines(update(`"b"`, 5, 1)+update(`"a"`, 5, 2)+update(`"c"`, 5, 1), &eb)
	if st != http.StatusConflict {
		t.Fatalf("status %d, want 409: %+v", st, eb)
	}
	for _, want := range []string{"request 2:2: protocol violation (conflicting-diff) at time 5", "request 1:1"} {
		if !strings.Contains(eb.Error, want) {
			t.Errorf("error %q does not say %q", eb.Error, want)
		}
	}
	v := eb.Violation
	if v == nil || v.Kind != "conflicting-diff" || v.Time != "5" || v.At.Line != 2 || v.EarlierAt.Source != "request 1" {
		t.Fatalf("violation %+v", v)
	}
	if eb.Result == nil || eb.Result.Applied != 1 || eb.Result.Accepted != 1 {
		t.Fatalf("result %+v: want the message before the violation applied and accepted", eb.Result)
	}
}

func TestUnderSkipTheAnswerNamesTheFirstRejection(t *testing.T) {
	ts := newTestServer(t, recovery.Options{OnError: cdc.Skip}, Options{})
	var res appendResult
	body := update(`"a"`, 5, 1) + "not json\n" + update(`"a"`, 5, 2) + update(`"b"`, 5, 1)
	if st := ts.appendLines(body, &res); st != http.StatusOK {
		t.Fatalf("status %d: %+v", st, res)
	}
	if res.Skipped != 2 || res.Accepted != 2 || res.Messages != 4 {
		t.Fatalf("got %+v: want 2 skipped, 2 accepted of 4", res)
	}
	fr := res.FirstRejection
	if fr == nil || fr.Source != "request 1" || fr.Line != 2 || fr.Reason == "" {
		t.Fatalf("first rejection %+v: want line 2 of request 1", fr)
	}
	body = update(`"c"`, 5, 1) + update(`"a"`, 5, 3) + "not json\n"
	if st := ts.appendLines(body, &res); st != http.StatusOK || res.FirstRejection == nil || res.FirstRejection.Line != 2 ||
		!strings.Contains(res.FirstRejection.Reason, "conflicting-diff") {
		t.Fatalf("status %d, first rejection %+v: want the violation at line 2", st, res.FirstRejection)
	}
}

func TestMsgpackBodiesAreDecodedByContentType(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var body []byte
	for _, m := range []cdc.Message{
		{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`{"k":1}`), Time: 0, Diff: 1}},
		{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 0, Upper: 1, Counts: []cdc.Count{{Time: 0, Count: 1}}}},
	} {
		var err error
		if body, err = cdc.AppendMsgpack(body, &m); err != nil {
			t.Fatal(err)
		}
	}
	for _, ct := range []string{"application/msgpack", "application/x-msgpack"} {
		st, b, _ := ts.do("POST", "/v1/append", ct, body)
		var res appendResult
		json.Unmarshal(b, &res)
		if st != http.StatusOK || res.Messages != 2 {
			t.Fatalf("%s: status %d: %s", ct, st, b)
		}
	}
	// Unlabelled: the server's format.
	tm := newTestServer(t, recovery.Options{}, Options{Format: cdc.Msgpack})
	st, b, _ := tm.do("POST", "/v1/append", "", body)
	if st != http.StatusOK {
		t.Fatalf("an unlabelled msgpack body to a msgpack server: %d: %s", st, b)
	}
	st, b, _ = tm.do("POST", "/v1/append", "application/x-www-form-urlencoded", body)
	if st != http.StatusOK {
		t.Fatalf("curl's form label on a msgpack server: %d: %s", st, b)
	}
}

func TestRefusedRequestsGetTheirStatusAndAJSONError(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{MaxBody: 100})
	big := []byte(strings.Repeat(update(`"x"`, 1, 1), 5))
	for _, tc := range []struct {
		name, method, path, ct string
		body                   []byte
		header                 map[string]string
		want                   int
		says                   string
	}{
		{"unknown path", "GET", "/v2/append", "", nil, nil, 404, "no such path /v2/append"},
		{"metrics not served", "GET", "/metrics", "", nil, nil, 404, "no such path"},
		{"GET append", "GET", "/v1/append", "", nil, nil, 405, "takes POST"},
		{"POST status", "POST", "/v1/status", "", nil, nil, 405, "takes GET, HEAD"},
		{"body over the limit", "POST", "/v1/append", "application/x-ndjson", big, nil, 413, "over the limit of 100"},
		{"unknown content type", "POST", "/v1/append", "image/png", []byte("x"), nil, 415, "image/png is not a format"},
		{"compressed", "POST", "/v1/append", "application/x-ndjson", []byte("x"), map[string]string{"Content-Encoding": "gzip"}, 415, "gzip"},
		{"append with a parameter", "POST", "/v1/append?from=1", "application/x-ndjson", []byte(`{"progress":{"lower":0,"upper":1,"counts":[]}}` + "\n"), nil, 400, `takes no parameters, got "from=1"`},
		{"from 0", "GET", "/v1/output?from=0", "", nil, nil, 400, "start at 1"},
		{"from not a number", "GET", "/v1/output?from=x", "", nil, nil, 400, "from=x: not a whole number"},
		{"negative from says it is not a whole number", "GET", "/v1/output?from=-1", "", nil, nil, 400, "from=-1: not a whole number (decimal digits only)"},
		{"from over 64 bits says the largest", "GET", "/v1/output?from=99999999999999999999", "", nil, nil, 400, "too large: at most 18446744073709551615"},
		{"limit not a number", "GET", "/v1/output?limit=ten", "", nil, nil, 400, "limit=ten: not a whole number"},
		{"wait not a duration names the syntax", "GET", "/v1/output?limit=1&wait=5", "", nil, nil, 400, "wait=5: not a duration in Go's syntax"},
		{"limit 0", "GET", "/v1/output?limit=0", "", nil, nil, 400, "limit=0"},
		{"wait without limit", "GET", "/v1/output?wait=1s", "", nil, nil, 400, "wait needs limit"},
		{"wait too long", "GET", "/v1/output?limit=1&wait=1h", "", nil, nil, 400, "from 0 to 5m0s"},
		{"unknown parameter", "GET", "/v1/output?form=3", "", nil, nil, 400, "unknown parameter form"},
		{"semicolon separator", "GET", "/v1/output?from=500;limit=2", "", nil, nil, 400, "separate parameters with &"},
		{"bad escape", "GET", "/v1/output?from=5&lim%ZZ=2", "", nil, nil, 400, "malformed query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.srv.URL+tc.path, bytes.NewReader(tc.body))
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb errorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tc.want || !strings.Contains(eb.Error, tc.says) {
				t.Fatalf("got %d %q, want %d saying %q", resp.StatusCode, eb.Error, tc.want, tc.says)
			}
			if tc.want == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
}

func TestABodyOverTheLimitWithoutContentLengthIs413AndAppliesNothing(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{MaxBody: 100})
	body := strings.Repeat(update(`"x"`, 1, 1), 10)
	req, _ := http.NewRequest("POST", ts.srv.URL+"/v1/append", io.MultiReader(strings.NewReader(body)))
	req.ContentLength = -1 // chunked
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	if s, _ := ts.p.Status(); s.AcceptedUpdates != 0 {
		t.Fatalf("%d updates accepted from a refused body", s.AcceptedUpdates)
	}
}

// readOutput reads an output response's records.
func readOutput(t *testing.T, r io.Reader) []string {
	t.Helper()
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestOutputRecordsAreTheCleanLinesWithTheirSeqFirst(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var res appendResult
	ts.appendLines(update(`{"b":2,"a":1}`, 0, 1)+progress(0, 1, 0, 1)+update(`"z"`, 1, -1)+progress(1, 2, 1, 1), &res)
	st, b, h := ts.do("GET", "/v1/output?from=2&limit=10", "", nil)
	if st != http.StatusOK || h.Get("Content-Type") != "application/x-ndjson" || h.Get("Cdclog-Output-End") != "5" {
		t.Fatalf("status %d, headers %v", st, h)
	}
	want := []string{
		`{"seq":2,"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}`,
		`{"seq":3,"update":{"data":"z","time":1,"diff":-1}}`,
		`{"seq":4,"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":1}]}}`,
	}
	got := readOutput(t, bytes.NewReader(b))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, b, _ = ts.do("GET", "/v1/output?limit=1", "", nil)
	if got := string(b); got != `{"seq":1,"update":{"data":{"a":1,"b":2},"time":0,"diff":1}}`+"\n" {
		t.Fatalf("limit 1 from the start: %q", got)
	}
}

func TestALongPollWaitsForTheFirstRecordOnly(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	start := time.Now()
	st, b, _ := ts.do("GET", "/v1/output?from=1&limit=5&wait=200ms", "", nil)
	if st != http.StatusOK || len(b) != 0 || time.Since(start) < 200*time.Millisecond {
		t.Fatalf("an empty log: status %d, %q after %v; want an empty 200 after the wait", st, b, time.Since(start))
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		var res appendResult
		ts.appendLines(update(`"a"`, 0, 1)+progress(0, 1, 0, 1), &res)
	}()
	start = time.Now()
	st, b, _ = ts.do("GET", "/v1/output?from=1&limit=5&wait=1m", "", nil)
	if got := readOutput(t, bytes.NewReader(b)); st != http.StatusOK || len(got) != 2 || time.Since(start) > 30*time.Second {
		t.Fatalf("status %d, %d records after %v; want the 2 records once committed", st, len(got), time.Since(start))
	}
	st, b, _ = ts.do("GET", "/v1/output?from=3&limit=5", "", nil)
	if st != http.StatusOK || len(b) != 0 {
		t.Fatalf("from past the end without wait: %d %q", st, b)
	}
}

func TestAStreamCarriesNewRecordsUntilEndStreams(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	resp, err := http.Get(ts.srv.URL + "/v1/output?from=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for round := range uint64(3) {
		var res appendResult
		ts.appendLines(update(`"a"`, round, 1)+progress(round, round+1, round, 1), &res)
		for i := range uint64(2) {
			select {
			case l := <-lines:
				if !strings.HasPrefix(l, fmt.Sprintf(`{"seq":%d,`, 2*round+i+1)) {
					t.Fatalf("round %d: got %s", round, l)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: record %d not streamed", round, i)
			}
		}
	}
	ts.s.EndStreams()
	select {
	case l, ok := <-lines:
		if ok {
			t.Fatalf("after EndStreams: %s", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not end")
	}
}

func TestStatusIsInspectsJSON(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var res appendResult
	ts.appendLines(update(`"a"`, 3, 1)+progress(0, 3), &res)
	st, b, _ := ts.do("GET", "/v1/status", "", nil)
	if st != http.StatusOK {
		t.Fatalf("status %d: %s", st, b)
	}
	want, err := ts.p.Status()
	if err != nil {
		t.Fatal(err)
	}
	var got recovery.Status
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Frontier != 3 || got.Waiting != want.Waiting || got.PendingUpdates != 1 || got.Path != want.Path {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if !bytes.Contains(b, []byte(`"frontier": "3"`)) {
		t.Fatalf("the frontier is not a string as in inspect's JSON:\n%s", b)
	}
}

func TestHealthzIsOKUntilTheProcessorStops(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	if st, b, _ := ts.do("GET", "/healthz", "", nil); st != http.StatusOK {
		t.Fatalf("running: %d %s", st, b)
	}
	ts.p.Close()
	st, b, _ := ts.do("GET", "/healthz", "", nil)
	var h health
	json.Unmarshal(b, &h)
	if st != http.StatusServiceUnavailable || !strings.Contains(h.Error, "closed") {
		t.Fatalf("closed: %d %s", st, b)
	}
	var eb errorBody
	if st := ts.appendLines(update(`"a"`, 0, 1), &eb); st != http.StatusServiceUnavailable {
		t.Fatalf("an append to a closed processor: %d %+v", st, eb)
	}
}

// countingObserver counts commits and requests.
type countingObserver struct {
	mu                sync.Mutex
	commits, requests int
}

func (o *countingObserver) Committed(b recovery.BatchStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits++
	o.requests += b.Requests
}
func (o *countingObserver) OutputSynced(time.Duration) {}

func TestConcurrentAppendsShareGroupCommits(t *testing.T) {
	obs := &countingObserver{}
	ts := newTestServer(t, recovery.Options{Observer: obs}, Options{})
	const producers, each = 8, 20
	var wg sync.WaitGroup
	for g := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var res appendResult
				body := update(fmt.Sprintf(`"p%d-%d"`, g, i), uint64(i), 1)
				if st := ts.appendLines(body, &res); st != http.StatusOK {
					t.Errorf("status %d", st)
				}
			}
		}()
	}
	wg.Wait()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.requests != producers*each {
		t.Fatalf("%d requests committed, want %d", obs.requests, producers*each)
	}
	t.Logf("%d appends in %d commits", obs.requests, obs.commits)
	if obs.commits >= obs.requests {
		t.Fatalf("%d appends took %d commits: none shared one", obs.requests, obs.commits)
	}
}

func TestServeAnswersInFlightAppendsThenStops(t *testing.T) {
	p, err := recovery.Open(filepath.Join(t.TempDir(), "state.db"), recovery.Options{Logger: quiet(), BatchDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := New(p, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	ln := hs.Listener
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	stream, err := http.Get(url + "/v1/output")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/append", "application/x-ndjson", strings.NewReader(update(`"a"`, 0, 1)))
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	for s.seen.Load() == 0 { // until the append's handler runs
		time.Sleep(time.Millisecond)
	}
	cancel()
	if st := <-answered; st != http.StatusOK {
		t.Fatalf("the append in flight at shutdown got %d", st)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	if st, _ := p.Status(); st.AcceptedUpdates != 1 {
		t.Fatalf("%d updates committed, want 1", st.AcceptedUpdates)
	}
}

// failingSink is an output file whose writes fail: a disk that has
// stopped taking data.
type failingSink struct{}

func (failingSink) Write([]byte) (int, error)         { return 0, errors.New("no space left on device") }
func (failingSink) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (failingSink) Sync() error                       { return nil }
func (failingSink) Size() (int64, error)              { return 0, nil }
func (failingSink) Truncate(int64) error              { return nil }
func (failingSink) Close() error                      { return nil }

func TestAStorageFailureIs503AndUnhealthy(t *testing.T) {
	ts := newTestServer(t, recovery.Options{Sink: failingSink{}, SinkName: "/out.jsonl", SinkFormat: cdc.JSONL}, Options{})
	// The first batch commits, then writing it to the file fails: it is
	// acknowledged (a reopen writes it) and the processor stops.
	var res appendResult
	if st := ts.appendLines(update(`"a"`, 0, 1)+progress(0, 1, 0, 1), &res); st != http.StatusOK {
		t.Fatalf("an append that committed: %d %+v", st, res)
	}
	var eb errorBody
	st := ts.appendLines(update(`"b"`, 1, 1), &eb)
	if st != http.StatusServiceUnavailable || !strings.Contains(eb.Error, "storage failure") {
		t.Fatalf("an append after the storage failure: %d %+v", st, eb)
	}
	st, b, _ := ts.do("GET", "/healthz", "", nil)
	var h health
	json.Unmarshal(b, &h)
	if st != http.StatusServiceUnavailable || !strings.Contains(h.Error, "no space left") {
		t.Fatalf("/healthz after a storage failure: %d %s", st, b)
	}
}

func TestMaxInFlightHoldsAppendsBackUntilThereIsRoom(t *testing.T) {
	obs := &countingObserver{}
	// Room for one body at a time: the appends are committed one by one.
	ts := newTestServer(t, recovery.Options{Observer: obs}, Options{MaxBody: 60, MaxInFlight: 60}) // each body is 46 bytes
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				var res appendResult
				if st := ts.appendLines(update(fmt.Sprintf(`"p%d-%d"`, g, i), uint64(i), 1), &res); st != http.StatusOK {
					t.Errorf("status %d", st)
				}
			}
		}()
	}
	wg.Wait()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.requests != 40 || obs.commits != 40 {
		t.Fatalf("%d appends in %d commits; with room for one at a time, want 40 in 40", obs.requests, obs.commits)
	}
}

func TestABodyWithoutAFinalLineEndIsWhole(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var res appendResult
	body := strings.TrimSuffix(update(`"a"`, 0, 1)+update(`"b"`, 0, 1), "\n")
	if st := ts.appendLines(body, &res); st != http.StatusOK || res.Accepted != 2 {
		t.Fatalf("status %d, %+v: want both messages accepted", st, res)
	}
}

func TestOutputThatGCDroppedIs410ToGETAndHEADNamingTheFirstRecordKept(t *testing.T) {
	ts := newTestServer(t, recovery.Options{}, Options{})
	var b strings.Builder
	for tm := uint64(0); tm < 3000; tm++ {
		b.WriteString(update(fmt.Sprintf(`"key-%d"`, tm), tm, 1))
		b.WriteString(progress(tm, tm+1, tm, 1))
	}
	var res appendResult
	if st := ts.appendLines(b.String(), &res); st != http.StatusOK {
		t.Fatalf("append: %d %+v", st, res)
	}
	gc, err := ts.p.GC(context.Background(), recovery.GCOptions{RetainOutput: recovery.RetainRecords(10)})
	if err != nil || gc.OutputFrom <= 1 {
		t.Fatalf("gc: %+v, %v; want output dropped", gc, err)
	}
	st, body, _ := ts.do("GET", "/v1/output?from=1&limit=2", "", nil)
	want := fmt.Sprintf("the output log starts at record %d", gc.OutputFrom)
	if st != http.StatusGone || !strings.Contains(string(body), want) {
		t.Fatalf("from 1 after gc: %d %s; want 410 saying %q", st, body, want)
	}
	for _, q := range []string{"from=1", "from=1&limit=2"} {
		if st, _, _ := ts.do("HEAD", "/v1/output?"+q, "", nil); st != http.StatusGone {
			t.Errorf("HEAD ?%s after gc: %d; want GET's 410", q, st)
		}
	}
	if st, _, _ := ts.do("HEAD", fmt.Sprintf("/v1/output?from=%d", gc.OutputFrom), "", nil); st != http.StatusOK {
		t.Errorf("HEAD from the first record kept: %d; want 200", st)
	}
	st, body, _ = ts.do("GET", fmt.Sprintf("/v1/output?from=%d&limit=1", gc.OutputFrom), "", nil)
	if st != http.StatusOK || !strings.HasPrefix(string(body), fmt.Sprintf(`{"seq":%d,`, gc.OutputFrom)) {
		t.Fatalf("from the first record kept: %d %s", st, body)
	}
}

func TestAnAppendWhoseClientLeftIsCountedOnceItCommits(t *testing.T) {
	ts := newTestServer(t, recovery.Options{BatchDelay: 500 * time.Millisecond}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	body := update(`"a"`, 0, 1) + progress(0, 1, 0, 1)
	req, err := http.NewRequestWithContext(ctx, "POST", ts.srv.URL+"/v1/append", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d before the commit that takes 500ms", resp.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.s.Stats().Unanswered == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := ts.s.Stats()
	if st.Unanswered != 1 || st.Appends != 0 || st.Messages != 2 || st.Totals.Accepted != 2 || st.Totals.Output != 2 {
		t.Fatalf("stats %+v; want one unanswered append of 2 messages, both accepted, 2 records out", st)
	}
}

func TestAStalledBodyIs408AndGivesItsRoomBack(t *testing.T) {
	body := update(`"a"`, 0, 1) + progress(0, 1, 0, 1)
	ts := newTestServer(t, recovery.Options{}, Options{MaxBody: 1 << 10, MaxInFlight: 1 << 10, BodyTimeout: 300 * time.Millisecond})
	// A chunked body, so that it takes the whole of MaxInFlight, which
	// stops after its first bytes.
	conn, err := net.Dial("tcp", ts.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/append HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"upd\r\n")
	time.Sleep(50 * time.Millisecond) // it holds the room first
	start := time.Now()
	var res appendResult
	if st := ts.appendLines(body, &res); st != http.StatusOK || res.Accepted != 2 {
		t.Fatalf("the append behind the stalled one: %d %+v", st, res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the append behind the stalled one took %v", d)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "stalled") {
		t.Fatalf("the stalled append: %d %s; want 408", resp.StatusCode, b)
	}
	if st, err := ts.p.Status(); err != nil || st.AcceptedUpdates != 1 {
		t.Fatalf("accepted %d updates (%v); want only the second append's", st.AcceptedUpdates, err)
	}
}

func TestAStreamWhoseClientStoppedReadingDoesNotHoldUpAShutdown(t *testing.T) {
	p, err := recovery.Open(filepath.Join(t.TempDir(), "state.db"), recovery.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const grace = 20 * time.Second
	s, err := New(p, Options{Logger: quiet(), ShutdownGrace: grace, StreamDrain: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	// More output than the socket buffers hold between the server and a
	// client that reads none of it.
	var b strings.Builder
	pad := strings.Repeat("x", 8<<10)
	for tm := uint64(0); tm < 3000; tm++ {
		b.WriteString(update(fmt.Sprintf(`"%d-%s"`, tm, pad), tm, 1))
		b.WriteString(progress(tm, tm+1, tm, 1))
	}
	resp, err := http.Post(url+"/v1/append", "application/x-ndjson", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("append: %d", resp.StatusCode)
	}
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/output?from=1 HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(300 * time.Millisecond) // the server fills the buffers, then blocks
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(grace):
		t.Fatalf("Serve still waits for the stream that nobody reads after %v", grace)
	}
	if d := time.Since(start); d > grace/2 {
		t.Fatalf("the shutdown took %v: the stream held it up", d)
	}
}

func TestAStreamOvertakenByGCIsCutOffWithAWarningNotAnError(t *testing.T) {
	var logs syncBuffer
	ts := newTestServer(t, recovery.Options{}, Options{})
	ts.s.log = slog.New(slog.NewTextHandler(&logs, nil))
	var b strings.Builder
	for tm := uint64(0); tm < 30000; tm++ {
		b.WriteString(update(fmt.Sprintf(`"key-%d-padded-so-that-the-stream-fills-the-socket-buffers"`, tm), tm, 1))
		b.WriteString(progress(tm, tm+1, tm, 1))
	}
	var res appendResult
	if st := ts.appendLines(b.String(), &res); st != http.StatusOK {
		t.Fatalf("append: %d %+v", st, res)
	}
	resp, err := http.Get(ts.srv.URL + "/v1/output?from=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The stream has sent its first batch and waits for the client, which
	// does not read, while gc drops all but the last records.
	time.Sleep(300 * time.Millisecond)
	if _, err := ts.p.GC(context.Background(), recovery.GCOptions{RetainOutput: recovery.RetainRecords(10)}); err != nil {
		t.Fatalf("gc: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the stream ended cleanly after %d bytes; want it cut off once gc dropped what it was to send", len(body))
	}
	got := logs.String()
	if strings.Contains(got, "level=ERROR") || !strings.Contains(got, "fell behind gc's retention") {
		t.Fatalf("log %q; want a warning that the reader fell behind gc's retention, no error", got)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
