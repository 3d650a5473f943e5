package cliargs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testApp has the shapes of cdclog's tree: global flags with and without
// values, a command with flags and file arguments, and a command with
// subcommands that repeat some of its flags.
func testApp() *cli.App {
	dbJSON := func() []cli.Flag {
		return []cli.Flag{&cli.StringFlag{Name: "db"}, &cli.BoolFlag{Name: "json"}}
	}
	return &cli.App{
		Name: "prog",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}},
			&cli.StringFlag{Name: "log-level"},
		},
		Commands: []*cli.Command{
			{Name: "ingest", Flags: []cli.Flag{&cli.StringFlag{Name: "db"}, &cli.StringFlag{Name: "out"}, &cli.Uint64Flag{Name: "start"}}},
			{Name: "merge"},
			{Name: "inspect", Flags: dbJSON(), Subcommands: []*cli.Command{
				{Name: "status", Flags: dbJSON()},
				{Name: "wal", Flags: append(dbJSON(), &cli.Uint64Flag{Name: "limit"})},
			}},
		},
	}
}

func TestParseMovesEveryFlagToItsCommand(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ingest in.jsonl --db s.db --out o.jsonl", "ingest --db s.db --out o.jsonl in.jsonl"},
		{"ingest --db x.db in.jsonl --out o.jsonl", "ingest --db x.db --out o.jsonl in.jsonl"},
		{"ingest -q in.jsonl --db s.db", "-q ingest --db s.db in.jsonl"},
		{"ingest a b --format msgpack c --quiet", "--format msgpack --quiet ingest a b c"},
		{"ingest --db=s.db a --log-level=debug", "--log-level=debug ingest --db=s.db a"},
		{"--db s.db ingest a", "ingest --db s.db a"},
		{"ingest --start -1 a", "ingest --start -1 a"},
		{"ingest --out - a", "ingest --out - a"},
		{"ingest - --db s.db", "ingest --db s.db -"},
		{"ingest a -- --out -x", "ingest -- a --out -x"},
		{"ingest --db s.db -- -", "ingest --db s.db -"},
		{"inspect --db p status --json", "inspect status --db p --json"},
		{"inspect status --db=p --json --format msgpack", "--format msgpack inspect status --db=p --json"},
		{"inspect wal --limit 3 --db p", "inspect wal --limit 3 --db p"},
		{"--json inspect --db p", "inspect --json --db p"},
		{"inspect bogus --json", "inspect --json bogus"},
		{"merge a.jsonl status", "merge a.jsonl status"},
		{"merge a.jsonl -q b.jsonl", "-q merge a.jsonl b.jsonl"},
		{"ingest --bogus in", "ingest --bogus in"},
		{"ingest in --help", "ingest --help"},
		{"inspect --db p -h status x", "inspect status --db p -h"},
		{"--help ingest", "ingest --help"},
		{"ingest -qh", "-q ingest -h"},
		{"ingset x --quiet", "--quiet ingset x"},
		{"ingest --db", "ingest --db"},
		{"", ""},
	}
	for _, c := range cases {
		args := append([]string{"prog"}, strings.Fields(c.in)...)
		got := strings.Join(Parse(testApp(), args).Strings()[1:], " ")
		if got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestParseNamesTheCommandPathAndItsArguments(t *testing.T) {
	l := Parse(testApp(), []string{"prog", "inspect", "--db", "p", "wal", "extra", "--limit", "2"})
	if !slices.Equal(l.Commands, []string{"inspect", "wal"}) || !slices.Equal(l.Args, []string{"extra"}) ||
		len(l.Flags) != 3 || !slices.Equal(l.Flags[2], []string{"--db", "p", "--limit", "2"}) {
		t.Fatalf("%+v", l)
	}
	// After "--" nothing is a command.
	l = Parse(testApp(), []string{"prog", "--", "ingest"})
	if len(l.Commands) != 0 || !slices.Equal(l.Args, []string{"ingest"}) {
		t.Fatalf("%+v", l)
	}
}

func TestSuggest(t *testing.T) {
	cmds := []string{"gen", "mangle", "convert", "demangle", "ingest", "replay", "inspect", "merge", "gc", "help", "version"}
	cases := map[string]string{
		"ingset": "ingest", "inspekt": "inspect", "mangel": "mangle", "demagle": "demangle", "replya": "replay",
		"insp": "inspect", "ver": "version", "gn": "gen", "cg": "gc",
		"in": "", "foo": "", "x": "", "": "", "ingestion-pipeline": "",
	}
	for in, want := range cases {
		if got := Suggest(in, cmds); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Suggest("stauts", []string{"status", "pending", "wal", "output", "quarantine"}); got != "status" {
		t.Errorf("Suggest(stauts) = %q", got)
	}
}

func TestFlagSuggestionReadsUrfavesUndefinedFlagError(t *testing.T) {
	cmd := []cli.Flag{&cli.StringFlag{Name: "on-error"}, &cli.BoolFlag{Name: "json"}}
	app := []cli.Flag{&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}}, &cli.StringFlag{Name: "hidden", Hidden: true}}
	for _, tc := range []struct{ err, want string }{
		{"flag provided but not defined: -on-eror", " (did you mean --on-error?)"},
		{"flag provided but not defined: -jsno", " (did you mean --json?)"},
		{"flag provided but not defined: -quite", " (did you mean --quiet?)"},
		{"flag provided but not defined: -w", " (did you mean -q?)"},
		{"flag provided but not defined: -hiden", ""}, // hidden flags are not offered
		{"flag provided but not defined: -frobnicate", ""},
		{"invalid value \"x\" for flag -json", ""},
	} {
		if got := FlagSuggestion(errors.New(tc.err), cmd, app); got != tc.want {
			t.Errorf("FlagSuggestion(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
