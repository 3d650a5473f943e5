package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

// consumersDB ingests the golden database's stream (without the
// quarantined line) and registers two consumers through the embedded
// API: billing, which committed record 29, and audit, which committed
// none. Its consumers view holds no time or path, so it is built afresh
// by each test rather than checked in.
func consumersDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "consumers.db")
	input := mangledStream(t, 30, func(tm, k int) bool { return !(tm == 22 && k == 1) })
	if code, _, stderr := runCLI(t, input, "--quiet", "ingest", "--db", db); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	p, err := recovery.Open(db, recovery.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for name, seq := range map[string]uint64{"billing": 29, "audit": 0} {
		c, err := p.Consumer(name)
		if err != nil {
			t.Fatal(err)
		}
		if seq > 0 {
			if err := c.Commit(context.Background(), seq); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	return db
}

// TestInspectConsumersGolden keeps the consumers view, text and JSON,
// stable (CDCLOG_UPDATE_GOLDEN=1 rewrites the expected files).
func TestInspectConsumersGolden(t *testing.T) {
	db := consumersDB(t)
	for file, args := range map[string][]string{
		"consumers.txt":   {"consumers"},
		"consumers.jsonl": {"consumers", "--json"},
	} {
		got := inspectDB(t, db, args...)
		path := filepath.Join(goldenDir, file)
		if os.Getenv("CDCLOG_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("inspect %q differs from %s:\n--- got\n%s--- want\n%s", args, path, got, want)
		}
	}
	// The JSON uses only the documented fields (the golden-field test
	// covers the checked-in views; this one is built here).
	doc, err := os.ReadFile("../../docs/inspect.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedFields(string(doc))["inspect consumers"]
	for _, line := range strings.Split(strings.TrimSpace(inspectDB(t, db, "consumers", "--json")), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			if !strings.Contains(strings.Join(documented, " "), k) {
				t.Errorf("inspect consumers --json has the undocumented field %q", k)
			}
		}
	}
}

func TestInspectStatusListsEachConsumersLag(t *testing.T) {
	db := consumersDB(t)
	out := inspectDB(t, db, "status")
	for _, want := range []string{"consumer audit:        next record 1, lag 38", "consumer billing:      next record 30, lag 9"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	s := statusJSON(t, db)
	if len(s.Consumers) != 2 || s.Consumers[1] != (recovery.ConsumerInfo{Name: "billing", Next: 30, Lag: 9}) {
		t.Fatalf("status --json consumers: %+v", s.Consumers)
	}
}

func TestConsumerDeleteRemovesAConsumerAndRefusesUnknownNames(t *testing.T) {
	db := consumersDB(t)
	code, out, stderr := runCLI(t, "", "consumer", "delete", "--db", db, "audit")
	if code != 0 || out != "deleted consumer \"audit\"\n" {
		t.Fatalf("consumer delete: exit %d, %q, %s", code, out, stderr)
	}
	if got := inspectDB(t, db, "consumers"); strings.Contains(got, "audit") || !strings.Contains(got, "billing") {
		t.Fatalf("after delete:\n%s", got)
	}
	code, _, stderr = runCLI(t, "", "consumer", "delete", "--db", db, "audit")
	if code != exitFailure || !strings.Contains(stderr, "no such consumer (the database has billing)") {
		t.Fatalf("delete of an unknown name: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"consumer", "delete", "--db", db},
		{"consumer", "delete", "--db", db, "a", "b"},
		{"consumer", "delete", "billing"},
		{"consumer"},
		{"consumer", "remove"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}
