package main

import (
	"bufio"
	"io"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

// runView writes one of inspect's views (show, a function of package
// inspect) of the database that --db names to stdout (readDB: read from
// the file when the running process that answered stops before the view
// showed anything).
func runView(c *cli.Context, name string, show func(w io.Writer, r control.View, o inspect.Options) error) error {
	e := getEnv(c)
	o := inspect.Options{JSON: wantJSON(c), Limit: c.Uint64("limit"), Log: e.log} // Limit 0 (all) for views without --limit
	return readDB(c, name, func(r control.View) error {
		return writeStdout(e, func(w *bufio.Writer) error { return withCode(exitFailure, show(w, r, o)) })
	})
}
