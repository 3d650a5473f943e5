package main

import (
	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// inspectViews lists inspect's subcommands, for the error on an unknown one.
const inspectViews = "status, pending, wal, output, quarantine or consumers"

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:        "inspect",
		Usage:       "show a database's stored state: status, pending times, WAL, output, quarantine, consumers",
		UsageText:   "cdclog inspect --db PATH [--lock-timeout D] [status|pending|wal|output|quarantine|consumers] [--json] [VIEW FLAGS]",
		Description: helpText("inspect"),
		Flags:       append(dbFlags(), jsonFlag()),
		Subcommands: []*cli.Command{
			inspectStatusCommand(),
			inspectPendingCommand(),
			inspectWALCommand(),
			inspectOutputCommand(),
			inspectQuarantineCommand(),
			inspectConsumersCommand(),
		},
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
		Name:        name,
		Usage:       usage,
		UsageText:   usageText,
		Description: description,
		Flags:       append(append(dbFlags(), jsonFlag()), flags...),
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
