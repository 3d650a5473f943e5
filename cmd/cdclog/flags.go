package main

import "github.com/urfave/cli/v2"

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
// code 2): the app-level hook does not reach subcommands.
func commandUsageError(name string) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return usageError("%s: %v", name, err)
	}
}
