// Command cdclog is the command line of cdclog, an embedded, crash-safe
// processor for change-data-capture logs. It only parses flags, calls the
// packages that do the work and prints; run `cdclog --help` for the tour.
package main

import (
	"io"
	"os"

	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/cdclog/cdclog/internal/gctune"
	"github.com/urfave/cli/v2"
)

func main() {
	gctune.Tune()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 for
// success, 1 for a runtime failure, 2 for a usage error and 3 for a protocol
// violation. Tests call it in-process with their own streams.
//
// Flags may come anywhere on the line (see package cliargs): the line is
// read against the command tree and put back in the order urfave/cli
// parses.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	line := cliargs.Parse(app, args)
	if line.Help && len(line.Commands) == 0 && len(line.Args) > 0 {
		return reportError(stderr, unknownCommand(app.Commands, line.Args[0]))
	}
	if sub := subcommandHelp(app, line); sub != nil {
		line = *sub
	}
	if len(line.Commands) == 1 && line.Commands[0] == "help" && len(line.Args) > 0 {
		var err error
		if line, err = cliargs.HelpLine(app, line); err != nil {
			return reportError(stderr, withCode(exitUsage, err))
		}
	}
	return reportError(stderr, app.Run(line.Strings()))
}

// subcommandHelp turns "COMMAND help [SUB]" for a command with subcommands
// (inspect, consumer) into "help COMMAND [SUB]", which urfave/cli would
// otherwise take for an unknown view or subcommand named help. It returns
// nil for every other line: for a command without subcommands, such as
// demangle, "help" is an ordinary argument (a file name).
func subcommandHelp(app *cli.App, line cliargs.Line) *cliargs.Line {
	if len(line.Commands) == 0 || len(line.Args) == 0 || line.Args[0] != "help" {
		return nil
	}
	cmd := app.Command(line.Commands[0])
	for _, name := range line.Commands[1:] {
		if cmd == nil {
			return nil
		}
		cmd = cmd.Command(name)
	}
	if cmd == nil || len(cmd.Subcommands) == 0 {
		return nil
	}
	args := append(append([]string(nil), line.Commands...), line.Args[1:]...)
	return &cliargs.Line{Program: line.Program, Flags: [][]string{line.Flags[0]}, Commands: []string{"help"}, Args: args}
}
