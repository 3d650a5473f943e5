package recovery

import (
	"bytes"
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
