package main

import (
	"strings"

	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// onErrorFlag is the --on-error flag shared by ingest, demangle and merge.
func onErrorFlag() cli.Flag {
	return &cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for bad input and protocol violations: fail, skip or quarantine"}
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

// commandUsageError makes a command's flag mistakes usage errors (exit
// code 2): the app-level hook does not reach subcommands. An unknown flag
// gets the flag it most likely meant.
func commandUsageError(name string) cli.OnUsageErrorFunc {
	return func(c *cli.Context, err error, _ bool) error {
		return usageError("%s: %v%s", name, err, flagSuggestion(c, err))
	}
}

// flagSuggestion returns " (did you mean --x?)" for an error about an
// unknown flag that resembles one of the command's or the app's flags.
func flagSuggestion(c *cli.Context, err error) string {
	const prefix = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || c == nil {
		return ""
	}
	var flags [][]cli.Flag
	if c.Command != nil {
		flags = append(flags, c.Command.Flags)
	}
	flags = append(flags, c.App.Flags)
	s := cliargs.Suggest(strings.TrimPrefix(msg, prefix), cliargs.FlagNames(flags...))
	switch {
	case s == "":
		return ""
	case len(s) == 1:
		return " (did you mean -" + s + "?)"
	}
	return " (did you mean --" + s + "?)"
}
