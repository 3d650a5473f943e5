package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/ordering"
)

// runCLI runs one command line in-process and returns its exit code and
// output streams.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"cdclog"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func rec(at, seq, id string) string {
	return fmt.Sprintf(`{"id":%q,"meta":{"created_at":%s,"sequence_number":%s}}`, id, at, seq)
}

// ids returns the "id" of each output line.
func ids(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		got = append(got, r.ID)
	}
	return got
}

func TestMergeTwoShards(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", strings.Join([]string{
		rec("1700000000", `"5"`, "a1"),
		rec(`"2023-11-14T22:13:20.5Z"`, `"1"`, "a2"), // 1700000000.5
		rec("1700000002", `"99999999999999999999999999999999999999"`, "a3"),
	}, "\n")+"\n")
	b := writeFile(t, dir, "b.jsonl", "\xEF\xBB\xBF"+strings.Join([]string{
		rec("1700000000", `"0010"`, "b1"), // same second as a1, larger number
		rec("1700000000.25", "3", "b2"),
		"",
		rec("1700000002", `"100000000000000000000000000000000000000"`, "b3"), // 39 digits > a3's 38
	}, "\r\n")) // CRLF, BOM, blank line, no final newline
	code, out, stderr := runCLI(t, "", "merge", a, b)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	want := "a1 b1 b2 a2 a3 b3"
	if got := strings.Join(ids(t, out), " "); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	// Lines are written unchanged, LF-terminated.
	if !strings.Contains(out, rec("1700000000", `"0010"`, "b1")+"\n") || strings.Contains(out, "\r") || strings.Contains(out, "\xEF\xBB\xBF") {
		t.Fatalf("records not written unchanged:\n%q", out)
	}
}

func TestMergeKeepsShardOrderAndReportsDisorder(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("5", "1", "a5")+"\n"+rec("1", "1", "a1")+"\n")
	b := writeFile(t, dir, "b.jsonl", rec("3", "1", "b3")+"\n")
	code, out, stderr := runCLI(t, "", "merge", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Join(ids(t, out), " "); got != "b3 a5 a1" {
		t.Fatalf("order %s, want b3 a5 a1", got)
	}
	if !strings.Contains(stderr, "out-of-order record") || !strings.Contains(stderr, "a.jsonl:2") {
		t.Fatalf("stderr does not report the out-of-order record at a.jsonl:2:\n%s", stderr)
	}
}

func TestMergeBadLineFails(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "shard-a.jsonl", rec("1", `"1"`, "ok")+"\n"+rec("2", `"12x"`, "bad")+"\n"+rec("3", `"3"`, "never")+"\n")
	code, out, stderr := runCLI(t, "", "merge", a)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	want := `shard-a.jsonl:2: meta.sequence_number "12x" is not a decimal integer`
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(out, "never") || strings.Contains(out, "bad") {
		t.Fatalf("wrote records after the failure:\n%s", out)
	}
}

func TestMergeMissingFieldsFail(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", `{"meta":{"sequence_number":"1"}}`+"\n")
	code, _, stderr := runCLI(t, "", "merge", a)
	if code != 1 || !strings.Contains(stderr, "a.jsonl:1: meta.created_at is missing") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestMergeSkip(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\nnot json\n"+rec("3", "1", "a3")+"\n")
	b := writeFile(t, dir, "b.jsonl", `{"meta":{}}`+"\n"+rec("2", "1", "b2")+"\n")
	code, out, stderr := runCLI(t, "", "merge", "--on-error", "skip", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Join(ids(t, out), " "); got != "a1 b2 a3" {
		t.Fatalf("order %s, want a1 b2 a3", got)
	}
	for _, want := range []string{"a.jsonl:2: record is not valid JSON", "b.jsonl:1: meta.created_at is missing", "skipped=2"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestMergeQuarantine(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\n"+rec("2", `"-7"`, "neg")+"\n\xff<&>\n"+rec("3", "1", "a3")+"\n")
	q := filepath.Join(dir, "rejected.jsonl")
	code, out, stderr := runCLI(t, "", "merge", "--on-error", "quarantine", "--quarantine", q, a)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.Join(ids(t, out), " "); got != "a1 a3" {
		t.Fatalf("order %s, want a1 a3", got)
	}
	data, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("quarantine has %d lines:\n%s", len(lines), data)
	}
	var e1, e2 cdc.RejectLine
	json.Unmarshal([]byte(lines[0]), &e1)
	json.Unmarshal([]byte(lines[1]), &e2)
	// Each entry carries the byte offset of its line, as ingest's and
	// demangle's rejects do.
	off1 := int64(len(rec("1", "1", "a1")) + 1)
	off2 := off1 + int64(len(rec("2", `"-7"`, "neg"))+1)
	if e1.Offset != off1 || e2.Offset != off2 {
		t.Errorf("entries at offsets %d and %d, want %d and %d", e1.Offset, e2.Offset, off1, off2)
	}
	if e1.Source != a || e1.Line != 2 || e1.Raw != rec("2", `"-7"`, "neg") ||
		e1.Reason != `meta.sequence_number "-7" is not a decimal integer` {
		t.Errorf("first entry %+v", e1)
	}
	if e2.Line != 3 || e2.Raw != "" || string(e2.RawBase64) != "\xff<&>" {
		t.Errorf("second entry %+v: a non-UTF-8 line must be kept exactly, in base64", e2)
	}
	if !strings.Contains(stderr, "quarantined=2") {
		t.Errorf("stderr lacks the count:\n%s", stderr)
	}
}

func TestMergeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no files", []string{"merge"}, "at least one FILE"},
		{"bad policy", []string{"merge", "--on-error", "ignore", a}, "--on-error"},
		{"quarantine without file", []string{"merge", "--on-error", "quarantine", a}, "needs --quarantine FILE"},
		{"file without quarantine", []string{"merge", "--quarantine", filepath.Join(dir, "q"), a}, "only used with --on-error quarantine"},
		{"quarantine is an input", []string{"merge", "--on-error", "quarantine", "--quarantine", a, a}, "also an input"},
		{"bad policy after the files", []string{"merge", a, "--on-error", "ignore"}, "--on-error"},
		{"stdin twice", []string{"merge", "-", "-"}, "stdin"},
		{"msgpack", []string{"--format", "msgpack", "merge", a}, "JSON Lines only"},
		{"unknown flag", []string{"merge", "--frobnicate", a}, "frobnicate"},
	}
	for _, tt := range tests {
		code, out, stderr := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, code, stderr, tt.want)
		}
		if out != "" {
			t.Errorf("%s: wrote %q", tt.name, out)
		}
	}
	if data, _ := os.ReadFile(a); !strings.Contains(string(data), "a1") {
		t.Fatal("an input file was truncated")
	}
}

func TestMergeMissingFile(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\n")
	missing := filepath.Join(dir, "nope.jsonl")
	code, out, stderr := runCLI(t, "", "merge", a, missing)
	if code != 1 || !strings.Contains(stderr, missing) || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 naming %s and no output", code, out, stderr, missing)
	}
}

func TestMergeDirectoryIsNotAShard(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runCLI(t, "", "merge", dir)
	if code != 1 || !strings.Contains(stderr, dir+" is a directory") || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestMergeStdin(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("2", "1", "a2")+"\n")
	code, out, stderr := runCLI(t, rec("1", "1", "s1")+"\n"+rec("3", "1", "s3"), "merge", "-", a)
	if code != 0 || strings.Join(ids(t, out), " ") != "s1 a2 s3" {
		t.Fatalf("exit %d, out %q, stderr %s", code, out, stderr)
	}
}

func TestMergeDynamoDBFallback(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl",
		`{"id":"d2","dynamodb":{"ApproximateCreationDateTime":1700000001,"SequenceNumber":"200"}}`+"\n")
	b := writeFile(t, dir, "b.jsonl",
		`{"id":"d1","dynamodb":{"ApproximateCreationDateTime":1700000001,"SequenceNumber":"30"}}`+"\n")
	code, out, stderr := runCLI(t, "", "merge", a, b)
	if code != 0 || strings.Join(ids(t, out), " ") != "d1 d2" {
		t.Fatalf("exit %d, out %q, stderr %s", code, out, stderr)
	}
}

func TestMergeHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "merge", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"cdclog merge [--on-error", "Examples:", "cdclog merge shard-a.jsonl shard-b.jsonl", "--quarantine FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

func TestMergeQuiet(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\n")
	code, _, stderr := runCLI(t, "", "--quiet", "merge", a)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want silence", code, stderr)
	}
}

// TestMergeManyShards merges 16 generated shard files (sorted, with equal
// times across shards, mixed notations and 38-digit sequence numbers) and
// checks the output: every line once, unchanged, in key order.
func TestMergeManyShards(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	var files []string
	want := map[string]int{}
	for s := range 16 {
		var b strings.Builder
		sec, seq := int64(1700000000), new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil)
		for i := range 300 {
			sec += int64(rng.IntN(2))
			seq.Add(seq, big.NewInt(int64(1+rng.IntN(3))))
			at := fmt.Sprint(sec)
			if rng.IntN(2) == 0 {
				at = strconv.Quote(time.Unix(sec, 0).UTC().Format(time.RFC3339))
			}
			zeros := strings.Repeat("0", rng.IntN(3)) // leading zeros do not count
			line := fmt.Sprintf(`{"id":"%d-%d","meta":{"created_at":%s,"sequence_number":"%s%s"}}`, s, i, at, zeros, seq)
			want[line]++
			b.WriteString(line + "\n")
		}
		files = append(files, writeFile(t, dir, fmt.Sprintf("shard-%02d.jsonl", s), b.String()))
	}
	code, out, stderr := runCLI(t, "", append([]string{"merge"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var prev ordering.Key
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if want[line] == 0 {
			t.Fatalf("line not in the input, or written twice: %s", line)
		}
		want[line]--
		k, err := ordering.RecordKey([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if k.Compare(prev) < 0 {
			t.Fatalf("%s after key %v", line, prev)
		}
		prev = k
	}
	for line, n := range want {
		if n != 0 {
			t.Fatalf("line missing from the output: %s", line)
		}
	}
}
