package cliargs

import (
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestHelpLineAsksTheNamedCommandForItsHelp(t *testing.T) {
	app := testApp()
	app.Commands = append(app.Commands, &cli.Command{Name: "help"})
	cases := []struct{ in, want, err string }{
		{"prog help ingest", "prog ingest --help", ""},
		{"prog -q help inspect wal", "prog -q inspect wal --help", ""},
		{"prog help --format x inspect", "prog --format x inspect --help", ""},
		{"prog help inspekt", "", `unknown command "inspekt" (did you mean inspect?)`},
		{"prog help inspect stauts", "", `unknown command "stauts" (did you mean status?)`},
		{"prog help frobnicate", "", `unknown command "frobnicate" (see 'prog --help')`},
	}
	for _, c := range cases {
		l := Parse(app, strings.Fields(c.in))
		got, err := HelpLine(app, l)
		var ue *UnknownCommandError
		switch {
		case c.err != "" && (!errors.As(err, &ue) || err.Error() != c.err):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		case c.err != "" && strings.Join(got.Strings(), " ") != strings.Join(l.Strings(), " "):
			t.Errorf("%q: the line changed on an error: %q", c.in, got.Strings())
		case c.err == "" && (err != nil || strings.Join(got.Strings(), " ") != c.want):
			t.Errorf("%q: %q, %v; want %q", c.in, got.Strings(), err, c.want)
		}
	}
}

func TestResolveShowsTheSameHelpPageForEveryWayOfAsking(t *testing.T) {
	app := testApp()
	app.Commands = append(app.Commands, &cli.Command{Name: "help"})
	cases := []struct{ in, want, err string }{
		{"prog inspect help", "prog inspect --help", ""},
		{"prog inspect help wal", "prog inspect wal --help", ""},
		{"prog -q inspect --db x.db help status", "prog -q inspect status --help", ""},
		{"prog help inspect wal", "prog inspect wal --help", ""},
		// help is an ordinary argument of a command without subcommands.
		{"prog merge help", "prog merge help", ""},
		{"prog ingest --db s.db help", "prog ingest --db s.db help", ""},
		{"prog --help frobnicate", "", `unknown command "frobnicate" (see 'prog --help')`},
		{"prog inspect help stauts", "", `unknown command "stauts" (did you mean status?)`},
	}
	for _, c := range cases {
		got, err := Resolve(app, strings.Fields(c.in))
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got.Strings(), " ") != c.want):
			t.Errorf("%q: %q, %v; want %q", c.in, got.Strings(), err, c.want)
		}
	}
}

// TestResolveReportsAnUnknownCommandBeforeTheFlagsMeantForIt: a mistyped
// command or subcommand followed by the flags of the one meant is
// reported as the unknown name, not as a flag that is not defined: at the
// app's level as an *UnknownCommandError, below a command with
// subcommands by leaving that command without flags (its action names
// the unknown subcommand). Known commands keep every flag.
func TestResolveReportsAnUnknownCommandBeforeTheFlagsMeantForIt(t *testing.T) {
	app := testApp()
	app.Commands = append(app.Commands, &cli.Command{Name: "help"})
	cases := []struct{ in, want, err string }{
		{"prog inspct --db s.db", "", `unknown command "inspct" (did you mean inspect?)`},
		{"prog --format x ingset --db s.db in.jsonl", "", `unknown command "ingset" (did you mean ingest?)`},
		{"prog frobnicate --json", "", `unknown command "frobnicate" (see 'prog --help')`},
		{"prog inspect sttus --db s.db --json", "prog inspect sttus", ""},
		{"prog -q inspect --db s.db --limit 3 sttus", "prog -q inspect sttus", ""},
		// what is known keeps its flags
		{"prog inspect --db s.db", "prog inspect --db s.db", ""},
		{"prog inspect wal --db s.db --limit 3", "prog inspect wal --db s.db --limit 3", ""},
		{"prog ingest --db s.db in.jsonl", "prog ingest --db s.db in.jsonl", ""},
		{"prog merge --json a b", "prog merge --json a b", ""},
		{"prog --format x", "prog --format x", ""},
	}
	for _, c := range cases {
		got, err := Resolve(app, strings.Fields(c.in))
		var ue *UnknownCommandError
		switch {
		case c.err != "" && (!errors.As(err, &ue) || err.Error() != c.err):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got.Strings(), " ") != c.want):
			t.Errorf("%q: %q, %v; want %q", c.in, got.Strings(), err, c.want)
		}
	}
}
