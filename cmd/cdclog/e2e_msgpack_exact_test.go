package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Writing JSON data as msgpack must not merge distinct values: data that
// msgpack cannot carry exactly (0.10000000000000000001 would be read back
// as 0.1, the data of the other update) is refused with an error naming
// the record, by the in-memory and the durable receiver alike, and
// written as JSON Lines without complaint.
func TestMsgpackOutputRefusesDataItWouldMerge(t *testing.T) {
	in := strings.Join([]string{
		`{"update":{"data":0.1,"time":1,"diff":1}}`,
		`{"update":{"data":0.10000000000000000001,"time":1,"diff":1}}`,
		`{"progress":{"lower":0,"upper":2,"counts":[{"time":1,"count":2}]}}`,
	}, "\n") + "\n"
	dir := t.TempDir()
	path := writeFile(t, dir, "in.jsonl", in)
	why := "number 0.10000000000000000001 would be read back as 0.1"
	expectFailure(t, exitFailure, nil, []string{"--out-format", "msgpack", "demangle", path},
		"update(0.10000000000000000001, t=1, +1)", why, "JSON Lines")
	expectFailure(t, exitFailure, nil, []string{"--out-format", "msgpack", "ingest", "--db", filepath.Join(dir, "a.db"), "--out", filepath.Join(dir, "out.mp"), path},
		path+":2", why)
	out := mustRunBin(t, nil, "demangle", path).Stdout
	if !strings.Contains(out, `"data":0.1,`) || !strings.Contains(out, `"data":0.10000000000000000001,`) {
		t.Errorf("JSON Lines output lost one of the two data:\n%s", out)
	}
}
