package main

import (
	"bufio"
	"io"
	"math"
	"strings"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// inspectViewDef is one of inspect's views, a subcommand: its help is
// help/inspect-NAME.txt, and its flags are the database flags, --json and
// flags.
type inspectViewDef struct {
	name, usage, usageText string
	flags                  []cli.Flag
	// check refuses the view's flags before the database is opened; nil
	// accepts any.
	check func(c *cli.Context) error
	// show writes the view of r to w (a function of package inspect);
	// c gives the view's own flags.
	show func(c *cli.Context, w io.Writer, r control.View, o inspect.Options) error
}

// viewFunc is the shape of the inspect functions that take nothing but
// the view's options.
type viewFunc func(w io.Writer, r control.View, o inspect.Options) error

// plain adapts an inspect function without flags of its own to show.
func plain(f viewFunc) func(*cli.Context, io.Writer, control.View, inspect.Options) error {
	return func(_ *cli.Context, w io.Writer, r control.View, o inspect.Options) error { return f(w, r, o) }
}

// inspectViews lists inspect's views in the order help shows them; the
// first, status, is also what inspect without a view shows. A new view
// is a row here and its help file.
func inspectViews() []inspectViewDef {
	return []inspectViewDef{{
		name:      "status",
		usage:     "where the stream stands and why the frontier does not move",
		usageText: "cdclog inspect --db PATH status [--json]",
		show:      plain(inspect.Status),
	}, {
		name:      "pending",
		usage:     "each pending time: expected update count (or unknown) and distinct updates held",
		usageText: "cdclog inspect --db PATH pending [--limit N] [--json]",
		flags:     []cli.Flag{limitFlag()},
		show:      plain(inspect.Pending),
	}, {
		name:      "wal",
		usage:     "the messages stored in the write-ahead log",
		usageText: "cdclog inspect --db PATH wal [--from-time T] [--to-time T] [--limit N] [--json]",
		flags: []cli.Flag{
			&cli.Uint64Flag{Name: "from-time", Usage: "only messages filed at time `T` or later"},
			&cli.Uint64Flag{Name: "to-time", Value: math.MaxUint64, DefaultText: "no bound", Usage: "only messages filed at time `T` or earlier"},
			limitFlag(),
		},
		check: func(c *cli.Context) error {
			if from, to := c.Uint64("from-time"), c.Uint64("to-time"); to < from {
				return usageError("inspect wal: --to-time %d is before --from-time %d", to, from)
			}
			return nil
		},
		show: func(c *cli.Context, w io.Writer, r control.View, o inspect.Options) error {
			return inspect.WAL(w, r, c.Uint64("from-time"), c.Uint64("to-time"), o)
		},
	}, {
		name:      "output",
		usage:     "the committed clean stream, with sequence numbers",
		usageText: "cdclog inspect --db PATH output [--from-seq N] [--limit N] [--json]",
		flags: []cli.Flag{
			&cli.Uint64Flag{Name: "from-seq", Value: 1, DefaultText: "the first record kept", Usage: "start at sequence number `N`"},
			limitFlag(),
		},
		show: func(c *cli.Context, w io.Writer, r control.View, o inspect.Options) error {
			from := c.Uint64("from-seq")
			if !c.IsSet("from-seq") {
				from = r.OutputStart() // the first record gc's retention kept
			}
			return inspect.Output(w, r, from, o)
		},
	}, {
		name:      "quarantine",
		usage:     "rejected input kept by --on-error quarantine, with position and reason",
		usageText: "cdclog inspect --db PATH quarantine [--limit N] [--json]",
		flags:     []cli.Flag{limitFlag()},
		show:      plain(inspect.Quarantine),
	}, {
		name:      "consumers",
		usage:     "the registered consumers: committed position and lag",
		usageText: "cdclog inspect --db PATH consumers [--json]",
		show:      plain(inspect.Consumers),
	}}
}

func inspectCommand() *cli.Command {
	views := inspectViews()
	var names []string
	var subs []*cli.Command
	for _, v := range views {
		names = append(names, v.name)
		subs = append(subs, v.command())
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return &cli.Command{
		Name:        "inspect",
		Usage:       "show a database's stored state: status, pending times, WAL, output, quarantine, consumers",
		UsageText:   "cdclog inspect --db PATH [--lock-timeout D] [" + strings.Join(names, "|") + "] [--json] [VIEW FLAGS]",
		Description: helpText("inspect"),
		Flags:       append(dbFlags(), jsonFlag()),
		Subcommands: subs,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				name := c.Args().First()
				if s := cliargs.Suggest(name, names); s != "" {
					return usageError("inspect: unknown view %q (did you mean %s?)", name, s)
				}
				return usageError("inspect: unknown view %q (want %s)", name, want)
			}
			return views[0].run(c)
		},
	}
}

// command builds the view's subcommand.
func (v inspectViewDef) command() *cli.Command {
	return &cli.Command{
		Name:        v.name,
		Usage:       v.usage,
		UsageText:   v.usageText,
		Description: helpText("inspect-" + v.name),
		Flags:       append(append(dbFlags(), jsonFlag()), v.flags...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c, "inspect "+v.name); err != nil {
				return err
			}
			return v.run(c)
		},
	}
}

// run writes the view of the database that --db names to stdout (readDB:
// read from the file when the running process that answered stops before
// the view showed anything).
func (v inspectViewDef) run(c *cli.Context) error {
	if v.check != nil {
		if err := v.check(c); err != nil {
			return err
		}
	}
	e := getEnv(c)
	o := inspect.Options{JSON: wantJSON(c), Limit: c.Uint64("limit"), Log: e.log} // Limit 0 (all) for views without --limit
	return readDB(c, "inspect "+v.name, func(r control.View) error {
		return writeStdout(e, func(w *bufio.Writer) error { return withCode(exitFailure, v.show(c, w, r, o)) })
	})
}

// jsonFlag is --json: machine-readable output.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON (one object for status, JSON Lines otherwise) instead of text"}
}

// wantJSON reports whether --json was given on the view or on inspect.
func wantJSON(c *cli.Context) bool {
	return givenIn(c, "json").Bool("json")
}

// limitFlag is --limit: show at most N items.
func limitFlag() cli.Flag {
	return &cli.Uint64Flag{Name: "limit", Usage: "show at most `N` items (0: all)"}
}
