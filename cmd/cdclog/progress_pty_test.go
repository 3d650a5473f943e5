//go:build linux

package main

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal (and keeps
// its other side open until the test ends).
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// On a terminal the progress display is drawn on stderr, except when the
// clean stream goes to stdout and stdout is that terminal too: the display
// and the records shared lines there.
func TestProgressIsDrawnOnATerminalUnlessTheStreamGoesToItToo(t *testing.T) {
	tty := openPTY(t)
	file, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	tests := []struct {
		name         string
		stdout       *os.File
		stdoutStream bool
		want         bool
	}{
		{"the stream to a file, stderr a terminal", file, true, true},
		{"nothing on stdout, both terminals", tty, false, true},
		{"the stream to stdout, both terminals", tty, true, false},
	}
	for _, tt := range tests {
		e := &env{stdout: tt.stdout, stderr: tty, stdoutStream: tt.stdoutStream}
		if got := e.interactive(); got != tt.want {
			t.Errorf("%s: interactive() = %v, want %v", tt.name, got, tt.want)
		}
		e.quiet = true
		if e.interactive() {
			t.Errorf("%s, --quiet: interactive() = true", tt.name)
		}
	}
	if e := (&env{stdout: tty, stderr: file}); e.interactive() {
		t.Error("stderr a file: interactive() = true")
	}
}
