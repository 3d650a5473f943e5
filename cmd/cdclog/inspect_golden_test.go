package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

// goldenDir holds a small database checked in as a fixed input, and the
// expected output of 'inspect status' on it. The database's stream is stuck
// on a withheld update, with duplicates and one quarantined message; the
// paths in its output are relative, and its creation and checkpoint times
// are stored in it, so the output does not depend on the machine or the
// day. Rebuild database and golden files with
//
//	CDCLOG_UPDATE_GOLDEN=1 go test ./cmd/cdclog -run TestInspectStatusGolden
//
// (new times in the database then change the golden files with it).
const goldenDir = "../../testdata/inspect"

func TestInspectStatusGolden(t *testing.T) {
	db := filepath.Join(goldenDir, "stuck.db")
	update := os.Getenv("CDCLOG_UPDATE_GOLDEN") != ""
	if update {
		buildGoldenDB(t, db)
	}
	for _, g := range []struct {
		file string
		args []string
	}{
		{"status.txt", []string{"status"}},
		{"status.json", []string{"status", "--json"}},
	} {
		got := inspect(t, db, g.args...)
		path := filepath.Join(goldenDir, g.file)
		if update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("inspect %q differs from %s:\n--- got\n%s--- want\n%s", g.args, path, got, want)
		}
	}
}

// buildGoldenDB ingests a stream with a withheld update (time 22: 1 of 2)
// and one malformed line from stdin, then compacts the database with gc
// (keeping the whole WAL) so that the checked-in file is small.
func buildGoldenDB(t *testing.T, dst string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "stuck.db")
	input := `{"update":{"data":"bad","time":-1,"diff":1}}` + "\n" +
		mangledStream(t, 30, func(tm, k int) bool { return !(tm == 22 && k == 1) })
	if code, _, stderr := runCLI(t, input, "--quiet", "ingest", "--db", tmp, "--on-error", "quarantine"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	if _, err := recovery.GC(tmp, recovery.GCOptions{KeepTimes: math.MaxUint64}); err != nil {
		t.Fatalf("gc: %v", err)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
