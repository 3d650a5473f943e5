package main

import (
	"fmt"
	"io"

	"github.com/cdclog/cdclog/internal/version"
	"github.com/urfave/cli/v2"
)

// printVersion writes what 'cdclog version' and 'cdclog --version' print.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "cdclog version %s\n", version.Read())
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print the version, commit and Go version of this binary",
		UsageText:   "cdclog version",
		Description: helpText("version"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("version takes no arguments, got %q", c.Args().First())
			}
			printVersion(c.App.Writer)
			return nil
		},
	}
}
