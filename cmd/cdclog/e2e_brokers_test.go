package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The broker runs themselves are tested against kfake and nats-server in
// the integration module; these are the command line's refusals, which
// need no broker, and what they leave behind: nothing.

func TestBrokerFlagMistakesAreUsageErrorsThatCreateNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"progress":{"lower":0,"upper":1,"counts":[]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		args     []string
		mentions []string
	}{
		{"an unknown scheme", []string{"ingest", "--db", db, "--from", "kafak://b1/t"}, []string{`unknown scheme "kafak"`}},
		{"credentials in a URL", []string{"ingest", "--db", db, "--from", "nats://u:p@n1/S"}, []string{"credentials do not belong in a URL", "CDCLOG_NATS_CREDS"}},
		{"a topic without a name", []string{"ingest", "--db", db, "--from", "kafka://b1/"}, []string{"no topic"}},
		{"one topic twice", []string{"ingest", "--db", db, "--from", "kafka://b1/t", "--from", "kafka://b2:9093/t"}, []string{"input kafka:t is given twice"}},
		{"a file as --to", []string{"ingest", "--db", db, "--to", "clean.jsonl", in}, []string{"--to takes kafka://", "--out FILE"}},
		{"a sink flag without --to", []string{"ingest", "--db", db, "--sink-id", "x", in}, []string{"--sink-id applies to a broker output"}},
		{"--max-sink-lag without --to", []string{"ingest", "--db", db, "--max-sink-lag", "10", in}, []string{"--max-sink-lag applies to a broker output"}},
		{"--allow-gap without a broker input", []string{"ingest", "--db", db, "--allow-gap", in}, []string{"--allow-gap applies to broker inputs"}},
		{"--commit-group without a Kafka input", []string{"ingest", "--db", db, "--from", "nats://n1/S", "--commit-group", "g"}, []string{"--commit-group applies to Kafka inputs"}},
		{"a transaction timeout for JetStream", []string{"ingest", "--db", db, "--to", "nats://n1/S/s.x", "--transaction-timeout", "2m", in}, []string{"JetStream has no transactions"}},
		{"--follow of stdin beside a broker", []string{"ingest", "--db", db, "--from", "kafka://b1/t", "--follow", "-"}, []string{"--follow reads one regular FILE"}},
		{"publish without --to", []string{"publish", "--db", db}, []string{"--to is required"}},
		{"publish to a file", []string{"publish", "--db", db, "--to", "out.jsonl"}, []string{"--to takes kafka://"}},
		{"publish to a wildcard subject", []string{"publish", "--db", db, "--to", "nats://127.0.0.1:1/S/clean.*"}, []string{"cannot publish to a subject with wildcards"}},
		{"ingest to a wildcard subject", []string{"ingest", "--db", db, "--to", "nats://127.0.0.1:1/S/>", in}, []string{"cannot publish to a subject with wildcards"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectFailure(t, exitUsage, nil, c.args, c.mentions...)
			if _, err := os.Stat(db); err == nil {
				t.Fatal("a refused command line created the database")
			}
		})
	}
}

func TestPublishOfAMissingDatabaseFailsWithoutCreatingIt(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	expectFailure(t, exitFailure, nil, []string{"publish", "--db", db, "--to", "kafka://127.0.0.1:1/t"}, "no database at this path")
	if _, err := os.Stat(db); err == nil {
		t.Fatal("publish created the database")
	}
}

func TestBrokerURLsWithCommasAreOneFromValueEach(t *testing.T) {
	// kafka://b1,b2/t must stay one input: were it split at the comma,
	// "b2/t" would be a file, and ingest would fail to open it.
	db := filepath.Join(t.TempDir(), "s.db")
	r := expectFailure(t, exitUsage, nil, []string{"ingest", "--db", db, "--from", "kafka://b1:9092,b2:9092/t", "--from", "kafka://b3/t"}, "input kafka:t is given twice")
	if strings.Contains(r.Stderr, "b2:9092/t: no such file") {
		t.Errorf("the URL was split at its comma:\n%s", r.Stderr)
	}
}

func TestInspectStatusOfADatabaseWithoutBrokersShowsNoBrokerLines(t *testing.T) {
	out := inspectDB(t, filepath.Join(goldenDir, "stuck.db"), "status")
	for _, s := range []string{"input kafka", "input nats", "sink "} {
		if strings.Contains(out, s) {
			t.Errorf("inspect status shows %q for a database that never saw a broker:\n%s", s, out)
		}
	}
}
