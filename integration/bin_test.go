package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
)

// The tests in *_bin_test.go run the built cdclog binary against the
// brokers, as an operator does, killing it with SIGKILL at random
// instants and restarting it, as cmd/cdclog's crash tests do with files.
// The binary is built once by testbin, from the main module's root (so
// with the main module's dependency versions), into a directory TestMain
// removes.

var built = testbin.Build{Dir: ".."}

func TestMain(m *testing.M) {
	code := m.Run()
	built.Cleanup()
	os.Exit(code)
}

// cdclogPath returns the built binary, building it on first use.
func cdclogPath(t *testing.T) string {
	t.Helper()
	return built.Path(t)
}

// syncBuffer is a bytes.Buffer safe to read while the child writes it.
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

// proc is a running cdclog.
type proc struct {
	t       *testing.T
	args    []string
	cmd     *exec.Cmd
	stdout  syncBuffer
	stderr  syncBuffer
	started time.Time
	exited  chan struct{}
	state   *os.ProcessState
}

// exit is how a cdclog ended.
type exit struct {
	code     int // -1 when killed by a signal
	signaled bool
	stderr   string
	elapsed  time.Duration
}

func (e exit) String() string {
	how := "exit " + strconv.Itoa(e.code)
	if e.signaled {
		how = "killed"
	}
	return fmt.Sprintf("%s after %v; stderr:\n%s", how, e.elapsed.Round(time.Millisecond), e.stderr)
}

// startCdclog starts cdclog with args (CDCLOG_TEST_LOG=1 copies its
// stderr to the test's).
func startCdclog(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, args: args, exited: make(chan struct{})}
	p.cmd = exec.Command(cdclogPath(t), args...)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	if os.Getenv("CDCLOG_TEST_LOG") != "" {
		p.cmd.Stderr = ioMulti{&p.stderr, os.Stderr}
	}
	p.cmd.WaitDelay = 10 * time.Second
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start cdclog: %v", err)
	}
	go func() {
		p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

type ioMulti []interface{ Write([]byte) (int, error) }

func (m ioMulti) Write(b []byte) (int, error) {
	for _, w := range m {
		w.Write(b)
	}
	return len(b), nil
}

func (p *proc) result() exit {
	e := exit{stderr: p.stderr.String(), elapsed: time.Since(p.started)}
	e.code, e.signaled = testbin.ExitOf(p.state)
	return e
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// wait waits for the process to exit, at most timeout (then it is killed
// and the test fails).
func (p *proc) wait(timeout time.Duration) exit {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.result()
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.exited
		p.t.Fatalf("cdclog %s: still running after %v; stderr:\n%s", strings.Join(p.args, " "), timeout, p.stderr.String())
		return exit{}
	}
}

// stop sends SIGTERM and waits for the exit.
func (p *proc) stop(timeout time.Duration) exit {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(timeout)
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() exit {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	return p.result()
}

// waitLog waits until the process's stderr holds s, or it exits, or
// timeout passes; it reports whether s was found.
func (p *proc) waitLog(s string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(p.stderr.String(), s) {
			return true
		}
		if !p.running() {
			return strings.Contains(p.stderr.String(), s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// waitVerified waits until p's output sink has verified the output: it
// is then running, its signal handler in place. who names p in the
// failure.
func waitVerified(t *testing.T, p *proc, who string) {
	t.Helper()
	if !p.waitLog("output sink: verified", time.Minute) {
		t.Fatalf("%s did not verify the output: %v", who, p.wait(time.Minute))
	}
}

// forwardThenCopy runs cdclog with args until read shows output, stops
// it, and returns a copy of its database db: a restored backup, a
// failed-over volume, for the tests of two writers on one output.
func forwardThenCopy(t *testing.T, db string, args []string, read func() []outRecord) string {
	t.Helper()
	first := startCdclog(t, args...)
	waitOutput(t, time.Minute, 1, first, read)
	if e := first.stop(time.Minute); e.code != 0 {
		t.Fatal(e)
	}
	cp := tempDB(t)
	if out, err := exec.Command("cp", db, cp).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return cp
}

// killSchedule draws the instants at which the crash tests kill cdclog.
type killSchedule struct {
	rng *rand.Rand
	max time.Duration
}

// newKillSchedule logs its seed; CDCLOG_CRASH_SEED=S replays one.
func newKillSchedule(t *testing.T, max time.Duration) *killSchedule {
	return &killSchedule{rng: rand.New(rand.NewPCG(testbin.CrashSeed(t), 14)), max: max}
}

// next is how long the next run lives before its SIGKILL.
func (k *killSchedule) next() time.Duration {
	return time.Duration(k.rng.Int64N(int64(k.max)))
}

// killAfterVerified waits until p's sink has verified the output, then
// kills it after d: a kill while it forwards rather than while it starts.
func killAfterVerified(t *testing.T, p *proc, d time.Duration) {
	t.Helper()
	waitVerified(t, p, "cdclog")
	killAfter(t, p, d)
}

// killAfter lets p run for d, then kills it; a process that exited by
// itself first fails the test.
func killAfter(t *testing.T, p *proc, d time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("cdclog exited before its kill: %v", p.result())
	case <-time.After(d):
	}
	if e := p.kill(); !e.signaled {
		t.Fatalf("cdclog exited before its kill: %v", e)
	}
}

// kills is how many times the crash tests kill cdclog: a few by default,
// CDCLOG_BROKER_SOAK=N for N.
func kills(t *testing.T, dflt int) int {
	if v := os.Getenv("CDCLOG_BROKER_SOAK"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
		return 10 * dflt
	}
	return dflt
}

// storedEnd opens the database read-only (no cdclog running) and returns
// its output end and the cursors.
func storedEnd(t *testing.T, db string) (uint64, map[string][]byte) {
	t.Helper()
	r, err := recovery.OpenReader(db, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.OutputEnd(), r.Cursors()
}

// outputFrontier is where the progress records of out reach.
func outputFrontier(out []outRecord) uint64 {
	var f uint64
	for _, r := range out {
		var m cdc.Message
		if cdc.ParseJSON(r.Value, &m) == nil && m.Kind == cdc.KindProgress {
			f = m.Progress.Upper
		}
	}
	return f
}

// waitOutput polls read until the output's progress reaches times.
func waitOutput(t *testing.T, timeout time.Duration, times uint64, p *proc, read func() []outRecord) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := read()
		f := outputFrontier(out)
		if f >= times {
			return
		}
		if p != nil && !p.running() {
			t.Fatalf("cdclog exited while the output reached %d of %d times: %v", f, times, p.result())
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: the output reaches time %d of %d (%d records)", timeout, f, times, len(out))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ctxTimeout is a context with a timeout, cancelled at the test's end.
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
