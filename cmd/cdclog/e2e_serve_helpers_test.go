package main

// Helpers of the end-to-end tests of cdclog serve and --metrics, which run
// the built binary as a server and talk to it over HTTP on loopback.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/internal/testbin"
)

// lockedBuffer is a bytes.Buffer safe to write from the child's stderr
// copier while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// bgProc is a cdclog child running in the background: serve, or ingest
// with --metrics.
type bgProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	start  time.Time
	exited chan struct{}
	res    testbin.Result
	// url is what the child logged it serves on.
	url string
}

// startBg starts cdclog with args and stdin, and waits until it logs the
// line msg with its url (serve's "serving", ingest's "serving metrics").
func startBg(t testing.TB, stdin io.Reader, msg string, args ...string) *bgProc {
	t.Helper()
	p := &bgProc{t: t, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(testbin.Path(t), args...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = stdin, p.stdout, p.stderr
	p.cmd.WaitDelay = 10 * time.Second
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start cdclog: %v", err)
	}
	go func() {
		err := p.cmd.Wait()
		p.res = testbin.Finish(p.cmd, err, nil, nil, time.Since(p.start))
		close(p.exited)
	}()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.exited })
	deadline := time.After(30 * time.Second)
	for {
		if u := logField(p.stderr.String(), msg, "url"); u != "" {
			p.url = u
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("cdclog %s exited before serving: %v", strings.Join(args, " "), p.result())
		case <-deadline:
			t.Fatalf("cdclog %s: no %q line after 30s:\n%s", strings.Join(args, " "), msg, p.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// startServe starts cdclog serve with args (--listen 127.0.0.1:0 unless
// args give one) and waits until it serves.
func startServe(t testing.TB, args ...string) *bgProc {
	t.Helper()
	full := append([]string{"serve"}, args...)
	if !strings.Contains(strings.Join(args, " "), "--listen") {
		full = append(full, "--listen", "127.0.0.1:0")
	}
	return startBg(t, nil, "serving", full...)
}

// result returns how the child ended, once it has; with its streams.
func (p *bgProc) result() testbin.Result {
	r := p.res
	r.Stdout, r.Stderr = p.stdout.String(), p.stderr.String()
	return r
}

// signal sends sig to the child.
func (p *bgProc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to d for the child to exit and returns how it ended.
func (p *bgProc) wait(d time.Duration) testbin.Result {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.result()
	case <-time.After(d):
		p.t.Fatalf("cdclog still running after %v:\n%s", d, p.stderr.String())
	}
	return testbin.Result{}
}

// running reports whether the child has not exited.
func (p *bgProc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill9 kills the child with SIGKILL and waits for it.
func (p *bgProc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// httpDo sends a request and returns the status and body.
func httpDo(t testing.TB, method, url, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// jsonObject decodes b into a map, failing t if it is not a JSON object.
func jsonObject(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// seqPrefix matches the "seq" an output record starts with.
var seqPrefix = regexp.MustCompile(`^\{"seq":([0-9]+),`)

// stripSeq returns an output record's sequence number and its line as
// cdclog demangle writes it.
func stripSeq(line string) (uint64, string, error) {
	m := seqPrefix.FindStringSubmatch(line)
	if m == nil {
		return 0, "", fmt.Errorf("not an output record: %q", line)
	}
	var seq uint64
	fmt.Sscan(m[1], &seq)
	return seq, "{" + line[len(m[0]):], nil
}

// lines splits text into its lines, without line ends.
func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// dbExists reports whether path exists.
func dbExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
