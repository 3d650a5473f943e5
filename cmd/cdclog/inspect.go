package main

import (
	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// inspectViews lists inspect's subcommands, for the error on an unknown one.
const inspectViews = "status, pending, wal, output, quarantine or consumers"

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show a database's stored state: status, pending times, WAL, output, quarantine, consumers",
		UsageText: "cdclog inspect --db PATH [--lock-timeout D] [status|pending|wal|output|quarantine|consumers] [--json] [VIEW FLAGS]",
		Description: `Shows what a cdclog database holds and why its stream is stuck, without
changing it: the database is opened read-only. While a running ingest holds
it, that process answers over its control socket (PATH.sock), as of its
last commit, and inspect says so on stderr; while another command holds it
(gc), inspect says so after --lock-timeout instead of waiting.

Views (status when none is named):
   status       where the stream stands and why the frontier does not move
   pending      each pending time: its expected update count (or unknown) and
                the distinct updates held
   wal          the messages stored in the write-ahead log
   output       the committed clean stream, with sequence numbers
   quarantine   input rejected under --on-error quarantine, with position and
                reason
   consumers    the registered consumers: committed position and lag

Each view prints aligned text for people; with --json it prints JSON for
scripts: one object for status, JSON Lines (one object per item) for the
others. docs/inspect.md documents every field.

Examples:
   cdclog inspect --db state.db
   cdclog inspect --db state.db status --json | jq .first_incomplete_time
   cdclog inspect --db state.db pending
   cdclog inspect --db state.db wal --from-time 100 --to-time 120
   cdclog inspect --db state.db output --from-seq 500 --limit 10 --json
   cdclog inspect --db state.db quarantine
   cdclog inspect --db state.db consumers --json`,
		Flags: append(dbFlags(), jsonFlag()),
		Subcommands: []*cli.Command{
			inspectStatusCommand(),
			inspectPendingCommand(),
			inspectWALCommand(),
			inspectOutputCommand(),
			inspectQuarantineCommand(),
			inspectConsumersCommand(),
		},
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("inspect"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				name := c.Args().First()
				if s := cliargs.Suggest(name, cliargs.CommandNames(c.Command.Subcommands)); s != "" {
					return usageError("inspect: unknown view %q (did you mean %s?)", name, s)
				}
				return usageError("inspect: unknown view %q (want %s)", name, inspectViews)
			}
			return runInspectStatus(c)
		},
	}
}

// inspectView builds one of inspect's subcommands: the database flags,
// --json and the view's own flags.
func inspectView(name, usage, usageText, description string, action cli.ActionFunc, flags ...cli.Flag) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		UsageText:       usageText,
		Description:     description,
		Flags:           append(append(dbFlags(), jsonFlag()), flags...),
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("inspect " + name),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("inspect %s takes no arguments, got %q", name, c.Args().Slice())
			}
			return action(c)
		},
	}
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
