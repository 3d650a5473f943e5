package recovery

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
)

func TestOpenOutputMakesARegularFileTheSinkAndAbortRemovesANewOne(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var o Options
	out, err := OpenOutput("clean.jsonl", cdc.Msgpack, store.NoWait, nil, &o)
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "clean.jsonl")
	if out.Stream() || o.Sink == nil || o.SinkName != abs || o.SinkFormat != cdc.Msgpack || o.Live != nil {
		t.Fatalf("stream %v, options %+v: want the sink at %s", out.Stream(), o, abs)
	}
	out.Abort()
	if _, err := os.Stat(abs); !os.IsNotExist(err) {
		t.Fatalf("after Abort: %v, want the new empty file gone", err)
	}
}

func TestAbortKeepsAnOutputFileThatWasThereBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clean.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var o Options
	out, err := OpenOutput(path, cdc.JSONL, store.NoWait, nil, &o)
	if err != nil {
		t.Fatal(err)
	}
	out.Abort()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("after Abort: %v, want the file kept", err)
	}
}

func TestOpenOutputWritesANonRegularFileAsAStream(t *testing.T) {
	var o Options
	out, err := OpenOutput(os.DevNull, cdc.JSONL, store.NoWait, nil, &o)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Stream() || o.Live == nil || o.LiveFormat != cdc.JSONL || o.Sink != nil {
		t.Fatalf("stream %v, options %+v: want %s a stream", out.Stream(), o, os.DevNull)
	}
	if _, err := o.Live.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenOutputInAMissingDirectoryFails(t *testing.T) {
	var o Options
	if _, err := OpenOutput(filepath.Join(t.TempDir(), "missing", "clean.jsonl"), cdc.JSONL, store.NoWait, nil, &o); err == nil {
		t.Fatal("OpenOutput in a missing directory succeeded")
	}
}

func TestOpenOutputMakesTheStdoutNamesTheGivenStdout(t *testing.T) {
	for _, tc := range []struct {
		path   string
		stdout bool
	}{
		{"", true}, {"-", true}, {"/dev/stdout", true}, {"/dev/fd/1", true}, {"/proc/self/fd/1", true},
		{"/dev/fd//1", true}, {"./-", true}, {"/dev/fd/2", false}, {".", false}, {"./", false}, {"a/..", false}, {"stdout", false},
	} {
		if got := IsStdout(tc.path); got != tc.stdout {
			t.Errorf("IsStdout(%q) = %v, want %v", tc.path, got, tc.stdout)
		}
	}
	var w bytes.Buffer
	for _, path := range []string{"", "-", "/dev/stdout"} {
		var o Options
		out, err := OpenOutput(path, cdc.Msgpack, store.NoWait, &w, &o)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Stream() || o.Live != io.Writer(&w) || o.LiveFormat != cdc.Msgpack || o.Sink != nil {
			t.Fatalf("OpenOutput(%q): stream %v, options %+v: want the given stdout", path, out.Stream(), o)
		}
		out.Abort()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var none *OutputPath
	none.Abort()
	if err := none.Close(); err != nil {
		t.Fatalf("a nil OutputPath's Close: %v", err)
	}
}

func TestCheckOutputRefusesThePathOfTheDatabaseOrOfAnInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []string{"cdc.db", "in.jsonl"} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("in.jsonl", "link.jsonl"); err != nil {
		t.Fatal(err)
	}
	inputs := []string{"kafka://b:9092/t", "-", "in.jsonl"}
	tests := []struct {
		name, out string
		want      *OutputConflictError // nil: accepted
	}{
		{"a file of its own", "clean.jsonl", nil},
		{"stdout by no path", "", nil},
		{"stdout by a dash", "-", nil},
		{"the database", "cdc.db", &OutputConflictError{Path: "cdc.db", Database: true}},
		{"the database by its absolute path", filepath.Join(dir, "cdc.db"), &OutputConflictError{Path: filepath.Join(dir, "cdc.db"), Database: true}},
		{"an input", "in.jsonl", &OutputConflictError{Path: "in.jsonl", Input: "in.jsonl"}},
		{"a link to an input", "link.jsonl", &OutputConflictError{Path: "link.jsonl", Input: "in.jsonl"}},
		{"an input by another spelling", "./sub/../in.jsonl", &OutputConflictError{Path: "./sub/../in.jsonl", Input: "in.jsonl"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutput(tc.out, "cdc.db", inputs)
			var ce *OutputConflictError
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("CheckOutput(%q) = %v, want nil", tc.out, err)
			case tc.want == nil:
			case !errors.As(err, &ce) || *ce != *tc.want:
				t.Fatalf("CheckOutput(%q) = %#v, want %#v", tc.out, err, tc.want)
			}
		})
	}
}

func TestCheckOutputComparesPathsThatDoNotExistYetByAbsolutePath(t *testing.T) {
	t.Chdir(t.TempDir())
	err := CheckOutput("new.db", "./new.db", nil)
	if want := "--out new.db is the database (--db): give the output a file of its own"; err == nil || err.Error() != want {
		t.Fatalf("CheckOutput = %v, want %q", err, want)
	}
	err = CheckOutput("out.jsonl", "new.db", []string{"later.jsonl", "out.jsonl"})
	if want := "--out out.jsonl is also an input: give the output a file of its own"; err == nil || err.Error() != want {
		t.Fatalf("CheckOutput = %v, want %q", err, want)
	}
}
