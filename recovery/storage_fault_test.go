package recovery

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAProcessorWhoseDatabaseFileIsCutStopsAndCloses: the database file
// cut short under a running processor (as a failing disk or another
// program can) makes the next commit fault in bbolt's memory map; the
// processor stops with the error, and Close returns at once, where it
// used to wait forever for the writer lock the faulted transaction held.
func TestAProcessorWhoseDatabaseFileIsCutStopsAndCloses(t *testing.T) {
	path := dbPath(t)
	msgs := mangled(7, cleanStream(7, 0, 6000))
	p := openTest(t, path, Options{BatchMessages: 1000})
	half := len(msgs) / 2
	appendAll(t, p, msgs[:half], 1000)
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := half; i < len(msgs) && err == nil; i += 1000 {
		_, err = p.Append(t.Context(), msgs[i:min(len(msgs), i+1000)], nil)
	}
	if !errors.Is(err, ErrFailed) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut to 8192 bytes") {
		t.Fatalf("append after the cut: %v, want ErrFailed saying the file was cut", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if !errors.Is(err, ErrFailed) {
			t.Fatalf("Close: %v, want the failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waiting after 10 s")
	}
}
