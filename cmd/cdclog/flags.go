package main

import (
	"regexp"
	"strings"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

// This file defines once each flag that several commands share, and the
// usage-error handling every command uses.

// onErrorFlag is the --on-error of ingest, serve, demangle and replay
// (merge words its own for the lines it rejects).
func onErrorFlag() cli.Flag {
	return &cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for bad input and protocol violations: fail, skip or quarantine"}
}

// onErrorPolicy reads --on-error (onErrorFlag, or merge's own).
func onErrorPolicy(c *cli.Context) (cdc.ErrorPolicy, error) {
	p, err := cdc.ParseErrorPolicy(c.String("on-error"))
	if err != nil {
		return p, usageError("--on-error: %v", err)
	}
	return p, nil
}

// noArgs refuses arguments to command cmd, which takes none.
func noArgs(c *cli.Context, cmd string) error {
	if c.NArg() > 0 {
		return usageError("%s takes no arguments, got %q", cmd, c.Args().Slice())
	}
	return nil
}

// atMostOneFile refuses more than one FILE argument to command cmd (none
// is stdin).
func atMostOneFile(c *cli.Context, cmd string) error {
	if c.NArg() > 1 {
		return usageError("%s takes at most one FILE, got %d", cmd, c.NArg())
	}
	return nil
}

// firstSet returns the first of the named flags that was given, or ""
// when none was: for the commands that refuse flags which do not apply
// to what the rest of the line asks.
func firstSet(c *cli.Context, names ...string) string {
	for _, n := range names {
		if c.IsSet(n) {
			return n
		}
	}
	return ""
}

// defaultLockTimeout is how long a database command waits for a database
// another process holds.
const defaultLockTimeout = 3 * time.Second

// dbFlags are --db and --lock-timeout. inspect declares them on itself and
// on each view, so both "inspect --db P status" and "inspect status --db P"
// work.
func dbFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "db", Usage: "cdclog database `PATH`"},
		lockTimeoutFlag(),
	}
}

// lockTimeoutFlag is --lock-timeout: how long to wait for a database
// another process holds.
func lockTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "lock-timeout", Value: defaultLockTimeout, Usage: "give up after `D` if another process holds the database (0: do not wait)"}
}

// newDBFlag is the --db of the commands that create the database when it
// is missing (ingest, serve).
func newDBFlag() cli.Flag {
	return &cli.StringFlag{Name: "db", Usage: "bbolt database `PATH` (created if missing; required)"}
}

// batchMessagesFlag is --batch-messages: the group commit's size.
func batchMessagesFlag() cli.Flag {
	return &cli.IntFlag{Name: "batch-messages", Value: recovery.DefaultBatchMessages, Usage: "group commit: at most `N` messages per transaction"}
}

// requireFlags returns a usage error naming the first of the flags that was
// not given. (urfave's Required also prints the whole help on stdout, which
// would pollute a command's output stream.)
func requireFlags(c *cli.Context, names ...string) error {
	for _, n := range names {
		if !c.IsSet(n) || c.String(n) == "" {
			return usageError("%s: --%s is required", c.Command.Name, n)
		}
	}
	return nil
}

// setupCommands gives every command in cmds, and their subcommands, what
// all of them need alike, so that no command can miss it: no "help"
// subcommand of its own (cdclog's help command covers them all), and flag
// mistakes as usage errors named by the command's path below cdclog
// ("inspect status"), unless the command has its own handler.
func setupCommands(path string, cmds []*cli.Command) {
	for _, c := range cmds {
		name := strings.TrimPrefix(path+" "+c.Name, " ")
		c.HideHelpCommand = true
		if c.OnUsageError == nil {
			c.OnUsageError = commandUsageError(name)
		}
		setupCommands(name, c.Subcommands)
	}
}

// commandUsageError makes a command's flag mistakes usage errors (exit
// code 2): the app-level hook does not reach subcommands. An unknown flag
// gets the flag it most likely meant.
func commandUsageError(name string) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, _ bool) error {
		return usageError("%s: %s%s", name, flagText(err), flagSuggestion(c, err))
	}
}

// goFlagName is a long flag's name as the flag package prints it in its
// errors, with one dash.
var goFlagName = regexp.MustCompile(`(not defined: |for flag |needs an argument: )-([[:alnum:]][[:alnum:]-]+)($|[: ])`)

// flagText is err's text with long flags spelled as cdclog's help spells
// them: "--limit", not the flag package's "-limit".
func flagText(err error) string {
	return goFlagName.ReplaceAllString(err.Error(), "$1--$2$3")
}

// flagSuggestion returns cliargs.FlagSuggestion for err among the
// command's flags, then the app's.
func flagSuggestion(c *cli.Context, err error) string {
	if c == nil {
		return ""
	}
	flags := [][]cli.Flag{c.App.Flags}
	if c.Command != nil {
		flags = [][]cli.Flag{c.Command.Flags, c.App.Flags}
	}
	return cliargs.FlagSuggestion(err, flags...)
}
