package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestASessionWritesEachProfileAskedFor(t *testing.T) {
	dir := t.TempDir()
	cpu, tr, mem := filepath.Join(dir, "cpu"), filepath.Join(dir, "trace"), filepath.Join(dir, "mem")
	s, err := Start(cpu, tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(mem); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, tr, mem} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, %v; want a profile", filepath.Base(p), fi, err)
		}
	}
}

func TestNothingAskedForWritesNothing(t *testing.T) {
	s, err := Start("", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(""); err != nil {
		t.Fatal(err)
	}
	var none *Session
	mem := filepath.Join(t.TempDir(), "mem")
	if err := none.Stop(mem); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mem); err != nil {
		t.Errorf("a nil Session wrote no allocation profile: %v", err)
	}
}

func TestAProfileThatCannotBeCreatedIsAnErrorNamingIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	if _, err := Start(filepath.Join(missing, "cpu"), ""); err == nil || !strings.HasPrefix(err.Error(), "cpu profile: ") {
		t.Errorf("cpu: %v", err)
	}
	// The CPU profile started first is stopped again: a new one can start.
	if _, err := Start(filepath.Join(t.TempDir(), "cpu"), filepath.Join(missing, "trace")); err == nil || !strings.HasPrefix(err.Error(), "trace: ") {
		t.Errorf("trace: %v", err)
	}
	s, err := Start(filepath.Join(t.TempDir(), "cpu"), "")
	if err != nil {
		t.Fatalf("after a failed Start: %v", err)
	}
	s.Stop("")
}
