package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// TestDemangleStopsPastMaxMemoryPointingAtIngest: cdclog demangle holds
// the pending state in memory; a held-back stream whose pending state
// passes --max-memory stops it with exit code 1 and an error that names
// the limit and cdclog ingest, instead of growing; without a limit (0)
// the same input completes, with demangle's clean stream, and a size that
// is not one is a usage error.
func TestDemangleStopsPastMaxMemoryPointingAtIngest(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "held.jsonl")
	writeHeldBackStream(t, in, streamSpec{Seed: 21, Times: 40_000})
	expectFailure(t, exitFailure, nil, []string{"demangle", "--max-memory", "2MiB", in},
		"past --max-memory 2 MiB", "cdclog ingest --db PATH", "keeps it on disk")
	r := mustRunBin(t, nil, "demangle", "--max-memory", "0", in)
	if want := mustRunBin(t, nil, "demangle", in).Stdout; r.Stdout != want || want == "" {
		t.Fatal("demangle without a limit gives another output than with the default limit")
	}
	if !bytes.Equal([]byte(r.Stdout), inMemoryClean(t, in, cdc.JSONL)) {
		t.Fatal("the output differs from the in-process demangle's")
	}
	expectFailure(t, exitUsage, nil, []string{"demangle", "--max-memory", "lots", in}, "--max-memory", "not a size")
}
