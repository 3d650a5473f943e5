package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestInspectJSONOfACompleteStream: a finished stream has no frontier
// number (it used to print 18446744073709551615, which jq shows as
// 18446744073709552000): "frontier" is null and "complete" true.
func TestInspectJSONOfACompleteStream(t *testing.T) {
	stream := mustRunBin(t, nil, "gen", "--times", "30").Stdout
	db, _ := ingestDB(t, mustRunBin(t, strings.NewReader(stream), "mangle").Stdout)
	out := mustRunBin(t, nil, "inspect", "--db", db, "status", "--json").Stdout
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if f, ok := m["frontier"]; !ok || f != nil || m["complete"] != true || m["first_incomplete_time"] != nil || m["waiting"] != "nothing" {
		t.Fatalf("status of a complete stream:\n%s", out)
	}
	if s := statusJSON(t, db); !s.Complete {
		t.Fatalf("read back: %+v", s)
	}
}

// TestInspectJSONKeepsTimesBeyond2To53Exact runs a stream near 2^60 and
// reads the times back through jq (when installed), which holds numbers as
// doubles: every digit survives.
func TestInspectJSONKeepsTimesBeyond2To53Exact(t *testing.T) {
	const lo, t1, hi = "1152921504606846976", "1152921504606846977", "1152921504606846978" // 2^60, +1, +2
	input := `{"update":{"data":"a","time":` + t1 + `,"diff":1}}` + "\n" +
		`{"progress":{"lower":` + lo + `,"upper":` + hi + `,"counts":[{"time":` + t1 + `,"count":2}]}}` + "\n"
	db, _ := ingestDB(t, input, "--start", lo)
	status := mustRunBin(t, nil, "inspect", "--db", db, "--json").Stdout
	pending := mustRunBin(t, nil, "inspect", "--db", db, "pending", "--json").Stdout
	wal := mustRunBin(t, nil, "inspect", "--db", db, "wal", "--json", "--limit", "1").Stdout
	for _, want := range []string{`"frontier": "` + t1 + `"`, `"first_incomplete_time": "` + t1 + `"`,
		`"min_time": "` + lo + `"`, `"max_time": "` + t1 + `"`} { // the statement speaks from lo on
		if !strings.Contains(status, want) {
			t.Errorf("status has no %s:\n%s", want, status)
		}
	}
	if want := `{"time":"` + t1 + `","expected":"2","held":1}` + "\n"; pending != want {
		t.Errorf("pending: %s, want %s", pending, want)
	}
	if !strings.HasPrefix(wal, `{"time":"`+t1+`"`) {
		t.Errorf("wal: %s", wal)
	}
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed")
	}
	for _, c := range []struct{ doc, filter, want string }{
		{status, ".frontier, .wal.max_time, .first_incomplete_time", strings.Repeat(t1+"\n", 3)},
		{pending, ".time", t1 + "\n"},
	} {
		cmd := exec.Command(jq, "-r", c.filter)
		cmd.Stdin = strings.NewReader(c.doc)
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("jq -r %q: %q (%v), want %q", c.filter, out, err, c.want)
		}
	}
}
