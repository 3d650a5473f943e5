package ordering

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenShardsNamesEachShardAndReadsStdinForDash(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, []byte("from a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shards, closeAll, err := OpenShards([]string{a, "-"}, strings.NewReader("from stdin\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	want := []struct{ name, text string }{{a, "from a\n"}, {"<stdin>", "from stdin\n"}}
	if len(shards) != len(want) {
		t.Fatalf("got %d shards, want %d", len(shards), len(want))
	}
	for i, w := range want {
		b, err := io.ReadAll(shards[i].R)
		if err != nil {
			t.Fatal(err)
		}
		if shards[i].Name != w.name || string(b) != w.text {
			t.Errorf("shard %d: %q reads %q, want %q reading %q", i, shards[i].Name, b, w.name, w.text)
		}
	}
}

func TestOpenShardsRefusesAMissingFileOrADirectory(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.jsonl")
	for _, tc := range []struct {
		name  string
		names []string
		check func(error) bool
	}{
		{"missing", []string{a, missing}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"directory", []string{a, dir}, func(err error) bool { return strings.Contains(err.Error(), dir+" is a directory, not a shard file") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shards, closeAll, err := OpenShards(tc.names, nil)
			if err == nil || !tc.check(err) {
				t.Fatalf("got %v, want the %s file refused", err, tc.name)
			}
			if shards != nil || closeAll != nil {
				t.Errorf("got shards %v on an error", shards)
			}
		})
	}
}
