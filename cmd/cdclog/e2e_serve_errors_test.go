package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeAnswersEachKindOfBadRequestWithItsStatus runs one server and
// checks each error status through the binary: the JSON body, and the
// CLI's wording where the CLI has one.
func TestServeAnswersEachKindOfBadRequestWithItsStatus(t *testing.T) {
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "s.db"), "--max-body", "1KiB")
	good := `{"update":{"data":"a","time":5,"diff":1}}` + "\n"
	if st, b := httpDo(t, "POST", srv.url+"/v1/append", "application/x-ndjson", []byte(good)); st != 200 {
		t.Fatalf("a good append: %d %s", st, b)
	}
	for _, tc := range []struct {
		name, method, path, ct, body string
		want                         int
		says                         []string
	}{
		{"malformed line", "POST", "/v1/append", "application/x-ndjson", good + "{\"update\":{\"data\":1,\"time\":7}}\n", 400,
			[]string{"request 2:2: ", "diff"}},
		{"violation under fail", "POST", "/v1/append", "application/x-ndjson", `{"update":{"data":"a","time":5,"diff":2}}` + "\n", 409,
			[]string{"request 3:1: protocol violation (conflicting-diff) at time 5", "at request 1:1"}},
		{"body over --max-body", "POST", "/v1/append", "application/x-ndjson", strings.Repeat(good, 40), 413, []string{"limit of 1024"}},
		{"unknown content type", "POST", "/v1/append", "text/csv", good, 415, []string{"text/csv"}},
		{"unknown path", "GET", "/v1/nothing", "", "", 404, []string{"/v1/nothing"}},
		{"wrong method", "PUT", "/v1/output", "", "", 405, []string{"GET"}},
		{"bad from", "GET", "/v1/output?from=-1", "", "", 400, []string{"from=-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := httpDo(t, tc.method, srv.url+tc.path, tc.ct, []byte(tc.body))
			msg, _ := jsonObject(t, b)["error"].(string)
			if st != tc.want || msg == "" {
				t.Fatalf("got %d %s, want %d with an error", st, b, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
		})
	}
	// The same violation through ingest: the same words.
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", good+`{"update":{"data":"a","time":5,"diff":2}}`+"\n")
	expectFailure(t, exitViolation, nil, []string{"ingest", "--db", filepath.Join(dir, "i.db"), "--out", filepath.Join(dir, "o.jsonl"), in},
		in+":2: protocol violation (conflicting-diff) at time 5", "at "+in+":1")
	srv.signal(syscall.SIGTERM)
	if r := srv.wait(30 * time.Second); r.Code != 0 {
		t.Fatalf("serve after SIGTERM: %v", r)
	}
}

// TestServeStopsCleanlyOnSIGINTAndSIGTERM: exit 0 for SIGTERM, 130 for
// SIGINT, as ingest.
func TestServeStopsCleanlyOnSIGINTAndSIGTERM(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 0}, {syscall.SIGINT, 130}} {
		sig := tc.sig
		t.Run(sig.String(), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "s.db")
			srv := startServe(t, "--db", db)
			body := `{"update":{"data":"a","time":0,"diff":1}}` + "\n" + `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n"
			if st, b := httpDo(t, "POST", srv.url+"/v1/append", "", []byte(body)); st != 200 {
				t.Fatalf("append: %d %s", st, b)
			}
			stream, err := http.Get(srv.url + "/v1/output")
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Body.Close()
			srv.signal(sig)
			r := srv.wait(30 * time.Second)
			if r.Code != tc.code || logField(r.Stderr, "serve stopped", "accepted") != "2" || logField(r.Stderr, "serve stopped", "output_records") != "2" {
				t.Fatalf("after %v: %v", sig, r)
			}
			if n := strings.Count(r.Stderr, "serve stopped"); n != 1 {
				t.Fatalf("%d summary lines", n)
			}
			// The stream ended cleanly, after the two records.
			sc := bufio.NewScanner(stream.Body)
			n := 0
			for sc.Scan() {
				n++
			}
			if sc.Err() != nil || n != 2 {
				t.Fatalf("the open stream: %d records, %v", n, sc.Err())
			}
			if s := dbStatus(t, db); s.OutputRecords != 2 {
				t.Fatalf("after the stop the database holds %d records", s.OutputRecords)
			}
		})
	}
}

// TestASecondSignalEndsServeAtOnce holds an append's body half-sent, so
// that the first SIGTERM's shutdown waits for it; the second exits at
// once, and the next run opens the database.
func TestASecondSignalEndsServeAtOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	srv := startServe(t, "--db", db)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /v1/append HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"update\":"))
	time.Sleep(100 * time.Millisecond) // the server reads the headers and starts the handler
	srv.signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	if !srv.running() {
		t.Fatalf("serve did not wait for the append in flight: %v", srv.result())
	}
	srv.signal(syscall.SIGTERM)
	r := srv.wait(10 * time.Second)
	if r.Code != 128+int(syscall.SIGTERM) || !strings.Contains(r.Stderr, "second signal") {
		t.Fatalf("after the second signal: %v", r)
	}
	next := startServe(t, "--db", db)
	next.signal(syscall.SIGTERM)
	if r := next.wait(30 * time.Second); r.Code != 0 {
		t.Fatalf("the next run: %v", r)
	}
}

func TestServeRefusesABusyPortBeforeOpeningTheDatabase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	expectFailure(t, exitFailure, nil, []string{"serve", "--db", db, "--listen", ln.Addr().String()},
		"listen on "+ln.Addr().String(), "address already in use")
	if dbExists(db) {
		t.Fatal("the database was created although serve could not listen")
	}
	expectFailure(t, exitUsage, nil, []string{"serve", "--db", db, "--listen", "nowhere"}, "--listen", "HOST:PORT")
	expectFailure(t, exitUsage, nil, []string{"serve", "--db", db, "--max-body", "lots"}, "--max-body")
	expectFailure(t, exitUsage, nil, []string{"serve", "--db", db, "--max-body", "2MiB", "--max-inflight", "1MiB"}, "--max-inflight 1MiB is less than --max-body 2MiB")
	expectFailure(t, exitUsage, nil, []string{"serve", "--listen", ":0"}, "--db is required")
}

func TestServeListensOnLoopbackForAPortAlone(t *testing.T) {
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "s.db"), "--listen", ":0")
	if !strings.HasPrefix(srv.url, "http://127.0.0.1:") {
		t.Fatalf("--listen :0 serves on %s, want loopback", srv.url)
	}
	if strings.Contains(srv.stderr.String(), "beyond the loopback") {
		t.Fatal("a loopback address warned of a wide one")
	}
}

// TestServeHoldsTheDatabaseLockAndAnswersInspect: another serve or
// ingest is refused; inspect is answered over the control socket, with
// what /v1/status says.
func TestServeHoldsTheDatabaseLockAndAnswersInspect(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	srv := startServe(t, "--db", db)
	expectFailure(t, exitFailure, nil, []string{"serve", "--db", db, "--listen", "127.0.0.1:0", "--lock-timeout", "0"}, "locked by another process")
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--lock-timeout", "0"}, "locked by another process")
	body := `{"update":{"data":"a","time":0,"diff":1}}` + "\n" + `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n"
	if st, b := httpDo(t, "POST", srv.url+"/v1/append", "", []byte(body)); st != 200 {
		t.Fatalf("append: %d %s", st, b)
	}
	r := mustRunBin(t, nil, "inspect", "--db", db, "status", "--json")
	if !strings.Contains(r.Stderr, "control socket") {
		t.Errorf("inspect does not say the running process answered:\n%s", r.Stderr)
	}
	_, b := httpDo(t, "GET", srv.url+"/v1/status", "", nil)
	viaInspect, viaHTTP := jsonObject(t, []byte(r.Stdout)), jsonObject(t, b)
	// The same fields (broker positions included) and the same values.
	for k := range viaHTTP {
		if _, ok := viaInspect[k]; !ok {
			t.Errorf("/v1/status has %s, inspect does not", k)
		}
	}
	for k, v := range viaInspect {
		if fmt.Sprint(v) != fmt.Sprint(viaHTTP[k]) {
			t.Errorf("%s: inspect says %v, /v1/status %v", k, v, viaHTTP[k])
		}
	}
}
