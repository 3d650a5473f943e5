package sigstop

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

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

func TestTheFirstSignalEndsTheContextAndIsRemembered(t *testing.T) {
	var log lockedBuffer
	ctx, s := Notify(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))
	defer s.Release()
	if s.Received() != nil {
		t.Fatalf("received %v before any signal", s.Received())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end at SIGTERM")
	}
	if s.Received() != syscall.SIGTERM {
		t.Errorf("received %v, want SIGTERM", s.Received())
	}
	if !strings.Contains(log.String(), "stopping: committing what was read") || !strings.Contains(log.String(), "signal=SIGTERM") {
		t.Errorf("log: %q", log.String())
	}
}

func TestReleaseEndsTheContextWithoutASignal(t *testing.T) {
	ctx, s := Notify(context.Background(), slog.New(slog.DiscardHandler))
	s.Release()
	s.Release() // twice is harmless
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end at Release")
	}
	if s.Received() != nil {
		t.Errorf("received %v", s.Received())
	}
}

func TestExitCodesAndNamesAreTheShells(t *testing.T) {
	if ExitCode(syscall.SIGINT) != 130 || ExitCode(syscall.SIGTERM) != 143 {
		t.Errorf("exit codes %d, %d", ExitCode(syscall.SIGINT), ExitCode(syscall.SIGTERM))
	}
	if Name(os.Interrupt) != "SIGINT" || Name(syscall.SIGTERM) != "SIGTERM" || Name(syscall.SIGHUP) != "hangup" {
		t.Errorf("names %q %q %q", Name(os.Interrupt), Name(syscall.SIGTERM), Name(syscall.SIGHUP))
	}
}
