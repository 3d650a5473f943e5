package main

import "github.com/urfave/cli/v2"

// onErrorFlag is the --on-error flag shared by ingest, demangle and merge.
func onErrorFlag() cli.Flag {
	return &cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for bad input and protocol violations: fail, skip or quarantine"}
}

// commandUsageError makes a command's flag mistakes usage errors (exit
// code 2): the app-level hook does not reach subcommands.
func commandUsageError(name string) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return usageError("%s: %v", name, err)
	}
}
