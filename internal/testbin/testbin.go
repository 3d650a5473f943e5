// Package testbin builds the cdclog command once per test binary and runs
// it as a child process, for end-to-end tests that must kill it, hold its
// database from another process or look at its exit code and streams.
//
// A package using it calls Cleanup from its TestMain, after m.Run, to
// remove the built binary:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testbin.Cleanup()
//		os.Exit(code)
//	}
//
// A test of another module (the integration module, which requires this
// one through a replace directive) builds with a Build whose Dir is this
// module's root, so that the binary has this module's dependency
// versions, not the other module's.
package testbin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Package is the import path of the command that Path builds.
const Package = "github.com/cdclog/cdclog/cmd/cdclog"

// A Build is the cdclog binary, built on first use with `go build` into
// a temporary directory that Cleanup removes. It is safe for concurrent
// use.
type Build struct {
	// Dir is the directory `go build` runs in, which selects the module
	// whose dependency versions the binary gets: "" is the test's own
	// directory (a package of this module); a test in another module
	// gives this module's root.
	Dir string

	once sync.Once
	tmp  string
	bin  string
	err  error
}

// Path returns the path of the binary, building it on first use. A build
// failure fails t.
func (b *Build) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatalf("build cdclog: %v", b.err)
	}
	return b.bin
}

func (b *Build) build() {
	gobin, err := goTool()
	if err != nil {
		b.err = err
		return
	}
	b.tmp, err = os.MkdirTemp("", "cdclog-testbin-")
	if err != nil {
		b.err = err
		return
	}
	out := filepath.Join(b.tmp, "cdclog")
	cmd := exec.Command(gobin, "build", "-o", out, Package)
	cmd.Dir = b.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.err = fmt.Errorf("%v\n%s", err, stderr.String())
		return
	}
	b.bin = out
}

// Cleanup removes the binary, if one was built.
func (b *Build) Cleanup() {
	if b.tmp != "" {
		os.RemoveAll(b.tmp)
	}
}

// local is the binary of the package's functions, built from the test's
// own directory.
var local Build

// Path returns the path of the cdclog binary, building it on first use
// from the test's directory. A build failure fails t.
func Path(t testing.TB) string {
	t.Helper()
	return local.Path(t)
}

// goTool finds the go command: go test puts $GOROOT/bin first in PATH.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the go command is not in PATH")
}

// Cleanup removes the binary built by Path, if any.
func Cleanup() { local.Cleanup() }

// Result is how a finished child process ended.
type Result struct {
	// Code is the exit code, or -1 when the process was killed by a
	// signal (Signaled is then set).
	Code     int
	Signaled bool
	Stdout   string
	Stderr   string
	Elapsed  time.Duration
}

// String describes the result for test failures.
func (r Result) String() string {
	how := fmt.Sprintf("exit %d", r.Code)
	if r.Signaled {
		how = "killed"
	}
	return fmt.Sprintf("%s after %v; stderr:\n%s", how, r.Elapsed.Round(time.Millisecond), r.Stderr)
}

// DefaultTimeout bounds every Run: a hung child fails the test instead of
// the whole test binary timing out.
const DefaultTimeout = 2 * time.Minute

// Command returns an exec.Cmd running cdclog with args, stdin from stdin
// (nil: no input), stdout and stderr collected into the returned buffers.
func Command(t testing.TB, stdin io.Reader, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(Path(t), args...)
	cmd.Stdin = stdin
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 10 * time.Second
	return cmd, stdout, stderr
}

// Run runs cdclog with args to completion (or DefaultTimeout, after which
// it is killed and t fails) and returns how it ended.
func Run(t testing.TB, stdin io.Reader, args ...string) Result {
	t.Helper()
	cmd, stdout, stderr := Command(t, stdin, args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cdclog: %v", err)
	}
	timer := time.AfterFunc(DefaultTimeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	timedOut := !timer.Stop()
	r := Finish(cmd, err, stdout, stderr, time.Since(start))
	if timedOut {
		t.Fatalf("cdclog %s: still running after %v, killed", strings.Join(args, " "), DefaultTimeout)
	}
	return r
}

// Finish turns the end of cmd.Wait into a Result. When the process could
// not be waited for at all (it never started), Finish panics: that is a
// broken test, not a finding.
func Finish(cmd *exec.Cmd, waitErr error, stdout, stderr *bytes.Buffer, elapsed time.Duration) Result {
	r := Result{Elapsed: elapsed}
	if stdout != nil {
		r.Stdout = stdout.String()
	}
	if stderr != nil {
		r.Stderr = stderr.String()
	}
	ps := cmd.ProcessState
	if ps == nil {
		panic(fmt.Sprintf("wait for cdclog: %v", waitErr))
	}
	// An error of copying stdin to a killed child (a broken pipe) is no
	// finding: the exit status is what counts.
	r.Code, r.Signaled = ExitOf(ps)
	return r
}

// ExitOf returns how a process ended: its exit code, or -1 and signaled
// set when a signal killed it.
func ExitOf(ps *os.ProcessState) (code int, signaled bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, true
	}
	return ps.ExitCode(), false
}

// KillWhen starts cmd and kills it with SIGKILL as soon as trigger returns
// true (polled every millisecond) or when ctx ends, unless it exits first.
// It returns how the process ended.
func KillWhen(ctx context.Context, cmd *exec.Cmd, stdout, stderr *bytes.Buffer, trigger func(elapsed time.Duration) bool) (Result, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() Result {
		cmd.Process.Signal(syscall.SIGKILL)
		err := <-exited
		return Finish(cmd, err, stdout, stderr, time.Since(start))
	}
	if trigger(0) {
		return kill(), nil
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return Finish(cmd, err, stdout, stderr, time.Since(start)), nil
		case <-ctx.Done():
			return kill(), ctx.Err()
		case <-tick.C:
			if trigger(time.Since(start)) {
				return kill(), nil
			}
		}
	}
}

// CrashSeed returns the seed of a test's kill schedule, and logs it: the
// value of CDCLOG_CRASH_SEED when set (to replay a schedule), the clock
// otherwise. (The timing of a child still varies from run to run.)
func CrashSeed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("CDCLOG_CRASH_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CDCLOG_CRASH_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("kill schedule seed %d (CDCLOG_CRASH_SEED=%d replays it)", seed, seed)
	return seed
}
