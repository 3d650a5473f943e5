package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// goldenDir holds a small database checked in as a fixed input, and the
// expected output of every inspect view on it, as text and as JSON. The
// database's stream is stuck on a withheld update, with duplicates and one
// quarantined message; the paths in its output are relative, and its
// creation and checkpoint times are stored in it, so the output does not
// depend on the machine or the day. Rewrite the expected outputs with
//
//	CDCLOG_UPDATE_GOLDEN=1 go test ./cmd/cdclog -run TestInspectGolden
//
// and rebuild the database too (new times in it then change every file)
// with CDCLOG_UPDATE_GOLDEN=db.
const goldenDir = "../../testdata/inspect"

// goldenViews are the inspect command lines of the golden test and their
// expected-output files.
var goldenViews = []struct {
	file string
	args []string
}{
	{"status.txt", []string{"status"}},
	{"status.json", []string{"status", "--json"}},
	{"pending.txt", []string{"pending"}},
	{"pending.jsonl", []string{"pending", "--json"}},
	{"wal.txt", []string{"wal"}},
	{"wal.jsonl", []string{"wal", "--json"}},
	{"output.txt", []string{"output"}},
	{"output.jsonl", []string{"output", "--json"}},
	{"quarantine.txt", []string{"quarantine"}},
	{"quarantine.jsonl", []string{"quarantine", "--json"}},
}

// TestInspectGolden keeps every view's output, and so every JSON field
// name and type, stable.
func TestInspectGolden(t *testing.T) {
	db := filepath.Join(goldenDir, "stuck.db")
	update := os.Getenv("CDCLOG_UPDATE_GOLDEN")
	if update == "db" {
		buildGoldenDB(t, db)
	}
	for _, g := range goldenViews {
		got := inspectDB(t, db, g.args...)
		path := filepath.Join(goldenDir, g.file)
		if update != "" {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("inspect %q differs from %s (CDCLOG_UPDATE_GOLDEN=1 rewrites it):\n--- got\n%s--- want\n%s", g.args, path, got, want)
		}
	}
}

// TestInspectJSONFieldsAreDocumented compares the JSON field names that
// each view can write (from its types) with the ones docs/inspect.md
// lists, and checks that the golden outputs use no other.
func TestInspectJSONFieldsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/inspect.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedFields(string(doc))
	types := map[string]reflect.Type{
		"inspect status":        reflect.TypeFor[inspect.StatusView](),
		"inspect status inputs": reflect.TypeFor[relay.InputPosition](),
		"inspect status sinks":  reflect.TypeFor[relay.SinkPosition](),
		"inspect pending":       reflect.TypeFor[inspect.PendingLine](),
		"inspect wal":           reflect.TypeFor[inspect.WALLine](),
		"inspect output":        reflect.TypeFor[inspect.OutputLine](),
		"inspect quarantine":    reflect.TypeFor[inspect.QuarantineLine](),
		"inspect consumers":     reflect.TypeFor[recovery.ConsumerInfo](),
		"gc":                    reflect.TypeFor[recovery.GCResult](),
	}
	for section, typ := range types {
		want := jsonFields(typ, "")
		if got := documented[section]; !slices.Equal(got, want) {
			t.Errorf("docs/inspect.md, %s: documents fields\n%v\nthe JSON has\n%v", section, got, want)
		}
	}
	for _, g := range goldenViews {
		if !strings.Contains(g.file, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(goldenDir, g.file))
		if err != nil {
			t.Fatal(err)
		}
		want := documented["inspect "+g.args[0]]
		dec := json.NewDecoder(strings.NewReader(string(b)))
		for dec.More() {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("%s: %v", g.file, err)
			}
			for k, v := range m {
				names := []string{k}
				if sub, ok := v.(map[string]any); ok && k == "wal" {
					names = nil
					for sk := range sub {
						names = append(names, k+"."+sk)
					}
				}
				for _, n := range names {
					if !slices.Contains(want, n) {
						t.Errorf("%s has the undocumented field %q", g.file, n)
					}
				}
			}
		}
	}
}

// documentedFields reads the field tables of docs/inspect.md: for each
// section ("## gc", "### inspect wal"), the backquoted names in the first
// column of its tables, sorted.
func documentedFields(doc string) map[string][]string {
	out := map[string][]string{}
	heading := regexp.MustCompile(`^#{2,3} (.+)$`)
	name := regexp.MustCompile("`([a-z_.0-9]+)`")
	section := ""
	for _, line := range strings.Split(doc, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			out[section] = append(out[section], m[1])
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// jsonFields lists the JSON names of a struct type's fields, the fields
// of embedded structs inlined and those of a nested struct as
// "outer.inner", sorted.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type, prefix)...)
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type, prefix+tag+".")...)
			continue
		}
		out = append(out, prefix+tag)
	}
	slices.Sort(out)
	return out
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
