package cdc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenInputReadsStdinOrTheNamedFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(file, []byte(`{"update":{"data":"f","time":1,"diff":1}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := strings.NewReader(`{"update":{"data":"s","time":2,"diff":1}}` + "\n")
	for _, tc := range []struct {
		name, source string
		time         uint64
	}{
		{"", "stdin", 2},
		{file, file, 1},
	} {
		r, closeIn, err := OpenInput(tc.name, stdin, JSONL)
		if err != nil {
			t.Fatalf("%q: %v", tc.name, err)
		}
		var m Message
		if err := r.Next(&m); err != nil || m.Time() != tc.time || r.Pos().Source != tc.source {
			t.Errorf("%q: read time %d from %q (%v), want %d from %q", tc.name, m.Time(), r.Pos().Source, err, tc.time, tc.source)
		}
		if err := closeIn(); err != nil {
			t.Errorf("%q: close: %v", tc.name, err)
		}
	}
	if _, _, err := OpenInput(filepath.Join(dir, "missing"), stdin, JSONL); !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "open input: ") {
		t.Errorf("a missing file: %v", err)
	}
}
