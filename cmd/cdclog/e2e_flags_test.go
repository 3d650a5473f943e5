package main

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/internal/version"
)

// flagsFixture is a small mangled stream in a file, and what demangle
// makes of it.
func flagsFixture(t *testing.T) (dir, in string, clean []byte) {
	t.Helper()
	dir = t.TempDir()
	in = writeFile(t, dir, "in.jsonl", mangledStream(t, 30, nil))
	return dir, in, inMemoryClean(t, in, cdc.JSONL)
}

// TestFlagsAfterTheArguments is issue 15's first example, through the
// built binary: flags after FILE are flags, not files; nothing goes to
// stdout when --out is given; no file named like a flag appears.
func TestFlagsAfterTheArguments(t *testing.T) {
	dir, in, clean := flagsFixture(t)
	for i, args := range [][]string{
		{"ingest", in, "--db", "a.db", "--out", "a.jsonl"},
		{"ingest", "--db", "b.db", in, "--out", "b.jsonl"},
		{"ingest", "-q", in, "--db=c.db", "--out=c.jsonl"},
		{"ingest", in, "--out", "d.jsonl", "--quiet", "--db", "d.db", "--log-level", "error"},
	} {
		cmd, stdout, stderr := testbin.Command(t, nil, args...)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stderr)
		}
		out := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		if got := readFile(t, out); !bytes.Equal(got, clean) {
			t.Errorf("%q: the output file is not the clean stream (%d bytes, want %d)", args, len(got), len(clean))
		}
		if stdout.Len() != 0 {
			t.Errorf("%q: wrote %d bytes to stdout", args, stdout.Len())
		}
		if i >= 2 && stderr.Len() != 0 {
			t.Errorf("%q: -q/--quiet after the command did not apply:\n%s", args, stderr)
		}
	}
	for _, name := range []string{"--out", "--db", "-q", "--quiet"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a file named %s was created", name)
		}
	}
}

// TestGlobalFlagsAfterTheCommandApplyAsBefore: the same bytes whether
// --format comes before the command, after it, or after its arguments.
func TestGlobalFlagsAfterTheCommandApplyAsBefore(t *testing.T) {
	_, in, _ := flagsFixture(t)
	want := mustRunBin(t, nil, "--format", "msgpack", "gen", "--times", "20").Stdout
	for _, args := range [][]string{
		{"gen", "--format", "msgpack", "--times", "20"},
		{"gen", "--times", "20", "--out-format=msgpack"},
	} {
		if got := mustRunBin(t, nil, args...).Stdout; got != want {
			t.Errorf("%q: not the msgpack stream", args)
		}
	}
	before := mustRunBin(t, nil, "--out-format", "msgpack", "--quiet", "demangle", in)
	after := mustRunBin(t, nil, "demangle", in, "--out-format", "msgpack", "--quiet")
	if before.Stdout != after.Stdout || after.Stderr != "" {
		t.Errorf("demangle FILE --out-format msgpack --quiet differs from the flags before the command")
	}
}

// TestDoubleDashEndsFlagsAndDashIsStdin: after "--" even "-x" is a file;
// a lone "-" is stdin wherever it stands.
func TestDoubleDashEndsFlagsAndDashIsStdin(t *testing.T) {
	dir, in, clean := flagsFixture(t)
	data := readFile(t, in)
	writeFile(t, dir, "-dash.jsonl", string(data))
	cmd, stdout, stderr := testbin.Command(t, nil, "demangle", "--quiet", "--", "-dash.jsonl")
	cmd.Dir = dir
	if err := cmd.Run(); err != nil || !bytes.Equal(stdout.Bytes(), clean) {
		t.Fatalf("demangle -- -dash.jsonl: %v\n%s", err, stderr)
	}
	expectFailure(t, exitUsage, nil, []string{"demangle", "-dash.jsonl"}, "flag provided but not defined: -dash.jsonl")
	r := mustRunBin(t, bytes.NewReader(data), "demangle", "-", "--quiet")
	if r.Stdout != string(clean) || r.Stderr != "" {
		t.Fatalf("demangle - --quiet: %v", r)
	}
}

// TestInspectFlagsAnywhereKeepTheSynopsisForm: the SPEC's form and every
// other order give the same answer.
func TestInspectFlagsAnywhereKeepTheSynopsisForm(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 20, nil))
	want := mustRunBin(t, nil, "inspect", "--db", db, "status", "--json").Stdout
	for _, args := range [][]string{
		{"inspect", "status", "--json", "--db", db},
		{"inspect", "--json", "--db", db},
		{"--db", db, "inspect", "status", "--json"},
		{"inspect", "status", "--db=" + db, "--json", "-q"},
	} {
		if got := mustRunBin(t, nil, args...).Stdout; got != want {
			t.Errorf("%q:\n%s\nwant\n%s", args, got, want)
		}
	}
	if r := mustRunBin(t, nil, "inspect", "pending", "--db", db, "--limit", "1", "--json"); strings.Count(r.Stdout, "\n") > 1 {
		t.Errorf("inspect pending --db P --limit 1: %q", r.Stdout)
	}
}

func TestMergeTakesFlagsAfterTheFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", rec("1", "1", "a1")+"\nnot json\n")
	b := writeFile(t, dir, "b.jsonl", rec("2", "1", "b1")+"\n")
	r := mustRunBin(t, nil, "merge", a, b, "--on-error", "skip", "-q")
	if strings.Count(r.Stdout, "\n") != 2 {
		t.Fatalf("merge A B --on-error skip: %v\n%s", r, r.Stdout)
	}
}

// TestHelpCommandShowsTheSameHelpAsTheFlag: 'cdclog help X Y' is
// 'cdclog X Y --help', and --help anywhere is the last command's help.
func TestHelpCommandShowsTheSameHelpAsTheFlag(t *testing.T) {
	cases := []struct{ help, flag []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "ingest"}, []string{"ingest", "--help"}},
		{[]string{"help", "inspect"}, []string{"inspect", "-h"}},
		{[]string{"help", "inspect", "status"}, []string{"inspect", "status", "--help"}},
		{[]string{"--quiet", "help", "gen"}, []string{"gen", "in.jsonl", "--help"}},
		{[]string{"help", "gen"}, []string{"--help", "gen"}},
		// "help" after a command with subcommands is its help too.
		{[]string{"inspect", "help"}, []string{"inspect", "--help"}},
		{[]string{"inspect", "--db", "x.db", "help", "wal"}, []string{"inspect", "wal", "--help"}},
		{[]string{"consumer", "help", "delete"}, []string{"consumer", "delete", "--help"}},
	}
	for _, c := range cases {
		h, f := mustRunBin(t, nil, c.help...), mustRunBin(t, nil, c.flag...)
		if h.Stdout != f.Stdout || !strings.Contains(h.Stdout, "USAGE:") {
			t.Errorf("%q and %q differ:\n%s\n---\n%s", c.help, c.flag, h.Stdout, f.Stdout)
		}
	}
	if r := mustRunBin(t, nil, "help", "inspect", "status"); !strings.Contains(r.Stdout, "cdclog inspect status -") {
		t.Errorf("help inspect status:\n%s", r.Stdout)
	}
}

// TestMistypedNamesGetASuggestion: exit 2 and "did you mean" for
// commands, views and flags; no suggestion when nothing is close.
func TestMistypedNamesGetASuggestion(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ingset"}, `unknown command "ingset" (did you mean ingest?)`},
		{[]string{"ingset", "--help"}, `unknown command "ingset" (did you mean ingest?)`},
		{[]string{"help", "inspekt"}, `unknown command "inspekt" (did you mean inspect?)`},
		{[]string{"help", "inspect", "stauts"}, `unknown command "stauts" (did you mean status?)`},
		{[]string{"inspect", "stauts", "--db", "x.db"}, `unknown view "stauts" (did you mean status?)`},
		{[]string{"ingest", "--dbb", "x.db"}, "flag provided but not defined: --dbb (did you mean --db?)"},
		{[]string{"gen", "--formt", "msgpack"}, "(did you mean --format?)"},
		// Long flags are spelled with two dashes, as the help spells them.
		{[]string{"gen", "--times", "-1"}, `invalid value "-1" for flag --times`},
		{[]string{"ingest", "--db"}, "flag needs an argument: --db"},
		{[]string{"merge", "--on-eror", "skip", "a"}, "merge: flag provided but not defined: --on-eror"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (see 'cdclog --help')`},
		// A mistyped command is named before the flags meant for it.
		{[]string{"inspct", "--db", "x.db"}, `unknown command "inspct" (did you mean inspect?)`},
		{[]string{"ingset", "--db", "x.db", "in.jsonl"}, `unknown command "ingset" (did you mean ingest?)`},
		{[]string{"consumer", "remove", "--db", "x.db", "billing"}, `consumer: unknown subcommand "remove" (want delete)`},
		{[]string{"inspect", "--db", "x.db", "--limit", "3", "stauts"}, `unknown view "stauts" (did you mean status?)`},
	}
	for _, c := range cases {
		r := expectFailure(t, exitUsage, nil, c.args, c.want)
		if r.Stdout != "" {
			t.Errorf("%q wrote to stdout:\n%s", c.args, r.Stdout)
		}
	}
}

// TestVersionReportsTheBuild: --version, -v, 'version' and a --version
// given after a command print the same text: the binary's module version,
// commit and Go version, read from its own build information.
func TestVersionReportsTheBuild(t *testing.T) {
	bi, err := buildinfo.ReadFile(testbin.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "cdclog version " + version.Of(bi).String() + "\n"
	if !strings.Contains(want, "go:     "+runtime.Version()+" ") {
		t.Fatalf("the built binary's Go version is not this toolchain's:\n%s", want)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}, {"gen", "--times", "5", "--version"}} {
		r := mustRunBin(t, nil, args...)
		if r.Stdout != want || r.Stderr != "" {
			t.Errorf("%q printed:\n%s%s\nwant:\n%s", args, r.Stdout, r.Stderr, want)
		}
	}
}

// TestBatchFlagsSayWhatTheyMean: the library reads a zero batch option
// as its default, the command line as what it says: --batch-messages
// below 1 and a negative --batch-delay are usage errors (on ingest and
// serve), and --batch-delay 0 commits without waiting.
func TestBatchFlagsSayWhatTheyMean(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range [][]string{{"ingest"}, {"serve", "--listen", "127.0.0.1:0"}} {
		db := filepath.Join(dir, cmd[0]+".db")
		for _, c := range []struct{ flag, value, want string }{
			{"--batch-messages", "0", "--batch-messages 0: a transaction holds at least 1 message"},
			{"--batch-messages", "-3", "--batch-messages -3"},
			{"--batch-delay", "-1s", "--batch-delay -1s: the wait cannot be negative"},
		} {
			args := append(append([]string{}, cmd...), "--db", db, c.flag, c.value)
			expectFailure(t, exitUsage, strings.NewReader(""), args, c.want)
		}
		if dbExists(db) {
			t.Errorf("%s: a usage error created the database", cmd[0])
		}
	}
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 3, Times: 200})
	out := filepath.Join(dir, "out.jsonl")
	mustRunBin(t, nil, "--quiet", "ingest", "--db", filepath.Join(dir, "zero.db"), "--out", out, "--batch-delay", "0", in)
	if got, want := readFile(t, out), inMemoryClean(t, in, cdc.JSONL); !bytes.Equal(got, want) {
		t.Fatalf("--batch-delay 0: %s", firstDifference(got, want))
	}
}

// An --out that is the database waited for the lock that the same
// process held and then blamed "another process"; one that is an input
// was refused as a file the database did not write. Both are usage
// errors, before anything is opened.
func TestIngestOutMustBeAFileOfItsOwn(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 3, Times: 20})
	db := filepath.Join(dir, "x.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", db, in}, "is the database (--db)"},
		{[]string{"--out", in, in}, "is also an input"},
		{[]string{"--out", filepath.Join(dir, ".", "in.jsonl"), "--from", in}, "is also an input"},
	} {
		expectFailure(t, exitUsage, strings.NewReader(""), append([]string{"ingest", "--db", db}, c.args...), c.want)
	}
	if dbExists(db) {
		t.Error("a usage error created the database")
	}
}
