// Command cdclog is the command line of cdclog, an embedded, crash-safe
// processor for change-data-capture logs. It only parses flags, calls the
// packages that do the work and prints; run `cdclog --help` for the tour.
package main

import (
	"io"
	"os"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 for
// success, 1 for a runtime failure, 2 for a usage error and 3 for a protocol
// violation. Tests call it in-process with their own streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.Run(args)
	return reportError(stderr, err)
}
