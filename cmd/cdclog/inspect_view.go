package main

import (
	"bufio"
	"errors"
	"io"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

// runView writes one of inspect's views (show, a function of package
// inspect) of the database that --db names to stdout. When the running
// process that answered for the database stops before the view has shown
// anything, the view is read from the file, once it is free.
func runView(c *cli.Context, name string, show func(w io.Writer, r control.View, o inspect.Options) error) (err error) {
	e := getEnv(c)
	o := inspect.Options{JSON: wantJSON(c), Limit: c.Uint64("limit"), Log: e.log} // Limit 0 (all) for views without --limit
	write := func(r control.View) error {
		return writeStdout(e, func(w *bufio.Writer) error { return withCode(exitFailure, show(w, r, o)) })
	}
	r, err := openView(c, name)
	if err != nil {
		return err
	}
	err = write(r)
	if errors.Is(err, errGoneBeforeAnswer) {
		r.Close()
		if r, err = openReader(c, name); err != nil {
			return err
		}
		err = write(r)
	}
	closeReader(r, &err)
	return err
}

// errGoneBeforeAnswer: the process answering for the database stopped
// before the view showed anything.
var errGoneBeforeAnswer = inspect.ErrGone
