package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// ingestFile builds the database db from input, written to a file and
// ingested by `cdclog ingest` without a broker output: what `cdclog
// publish` then forwards.
func ingestFile(t *testing.T, db string, input []cdc.Message) {
	t.Helper()
	var b []byte
	for i := range input {
		b = cdc.AppendJSON(b, &input[i])
		b = append(b, '\n')
	}
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if e := startCdclog(t, "ingest", "--db", db, "--out", db+".jsonl", file).wait(2 * time.Minute); e.code != 0 {
		t.Fatalf("ingest: %v", e)
	}
}

// publishKilledThenRerun runs `cdclog publish --to url` on db, killing it
// with SIGKILL at random instants (half of them while it forwards), then
// once more to its end, and checks the output: every sequence number once,
// in order, with the updates `cdclog demangle` gives for input.
func publishKilledThenRerun(t *testing.T, db, url string, input []cdc.Message, read func() []outRecord, extra ...string) {
	t.Helper()
	args := append([]string{"publish", "--db", db, "--to", url}, extra...)
	sched := newKillSchedule(t, 400*time.Millisecond)
	var seen []string
	for i := range kills(t, 8) {
		p := startCdclog(t, args...)
		if i%2 == 0 {
			p.waitLog("output sink: verified", time.Minute)
		}
		time.Sleep(sched.next())
		if !p.running() {
			seen = append(seen, "done before the kill")
			break
		}
		p.kill()
		out := read()
		seen = append(seen, fmt.Sprintf("%d records", len(out)))
	}
	t.Logf("the output after each kill: %s", strings.Join(seen, "; "))
	if e := startCdclog(t, args...).wait(3 * time.Minute); e.code != 0 {
		t.Fatalf("the last publish: %v", e)
	}
	end, _ := storedEnd(t, db)
	checkOutput(t, read(), end, input)
	// A second publish verifies the output and sends nothing.
	if e := startCdclog(t, args...).wait(time.Minute); e.code != 0 {
		t.Fatalf("publish again: %v", e)
	}
	checkOutput(t, read(), end, input)
}

func TestCdclogPublishToKafkaKilledMidRunAndRerunHasNoDuplicatesNoGaps(t *testing.T) {
	k := newKafkaTarget(t)
	input := mangled(20000, 41)
	db := tempDB(t)
	ingestFile(t, db, input)
	publishKilledThenRerun(t, db, k.url(k.out), input, func() []outRecord { return k.read(t) }, "--sink-timeout", "10s")
}

func TestCdclogPublishToJetStreamKilledMidRunAndRerunHasNoDuplicatesNoGaps(t *testing.T) {
	k := newNATSTarget(t)
	input := mangled(20000, 43)
	db := tempDB(t)
	ingestFile(t, db, input)
	publishKilledThenRerun(t, db, k.url(k.out, k.outSubj), input, func() []outRecord { return k.read(t) }, "--sink-timeout", "5s")
}
