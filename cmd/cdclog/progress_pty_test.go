//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal side of a new pseudo-terminal (and keeps
// its other side open until the test ends).
func openPTY(t *testing.T) *os.File {
	t.Helper()
	_, tty := openPTYPair(t)
	return tty
}

// openPTYPair returns both sides of a new pseudo-terminal, the controlling
// side (what the terminal shows can be read from it) and the terminal
// side; both are closed when the test ends.
func openPTYPair(t *testing.T) (ptmx, tty *os.File) {
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
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
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

// cdclog merge writes its records to stdout: run on a terminal, with
// stdout and stderr both that terminal, it must not draw its "merged N
// records" counter between them. Redirected, stdout a file, it does.
func TestMergeDrawsNoProgressWhenTheRecordsGoToTheTerminal(t *testing.T) {
	dir := t.TempDir()
	var shard strings.Builder
	for i := range 2 * 4096 { // the counter is drawn every ProgressEvery records
		fmt.Fprintf(&shard, "{\"meta\":{\"created_at\":%d,\"sequence_number\":\"1\"}}\n", i)
	}
	in := writeFile(t, dir, "a.jsonl", shard.String())

	ptmx, tty := openPTYPair(t)
	shown := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(ptmx) // until the terminal side is closed
		shown <- b
	}()
	code := run([]string{"cdclog", "merge", in}, strings.NewReader(""), tty, tty)
	tty.Close()
	screen := <-shown
	if code != 0 {
		t.Fatalf("exit %d, terminal showed %q", code, tail(screen))
	}
	if bytes.Contains(screen, []byte("merged ")) {
		t.Errorf("the progress counter was drawn among the records on the terminal: %q", tail(screen))
	}

	out, err := os.Create(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ptmx, tty = openPTYPair(t)
	go func() {
		b, _ := io.ReadAll(ptmx)
		shown <- b
	}()
	code = run([]string{"cdclog", "merge", in}, strings.NewReader(""), out, tty)
	tty.Close()
	screen = <-shown
	if code != 0 || !bytes.Contains(screen, []byte("merged ")) {
		t.Errorf("stdout a file: exit %d, want 0 and the counter drawn on stderr; terminal showed %q", code, tail(screen))
	}
}

// tail returns the last bytes of b, for a message.
func tail(b []byte) []byte { return b[max(0, len(b)-300):] }
