// Command cdclog is the command line of cdclog, an embedded, crash-safe
// processor for change-data-capture logs. It only parses flags, calls the
// packages that do the work and prints; run `cdclog --help` for the tour.
package main

import (
	"io"
	"os"

	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/cdclog/cdclog/internal/gctune"
)

func main() {
	gctune.Tune()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 for
// success, 1 for a runtime failure, 2 for a usage error and 3 for a protocol
// violation. Tests call it in-process with their own streams.
//
// Flags may come anywhere on the line, and "help COMMAND", "COMMAND
// --help" and "COMMAND help" (for inspect, consumer) are the same page: the
// line is read against the command tree and put back in the order
// urfave/cli parses (cliargs.Resolve).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	line, err := cliargs.Resolve(app, args)
	if err != nil {
		return reportError(stderr, withCode(exitUsage, err))
	}
	return reportError(stderr, app.Run(line.Strings()))
}
