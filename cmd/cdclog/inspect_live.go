package main

import (
	"errors"

	"github.com/cdclog/cdclog/control"
	"github.com/urfave/cli/v2"
)

// readDB calls fn with the database that --db names, read-only, whichever
// process holds it (control.Read): when a running cdclog holds it, that
// process answers over its control socket, and readDB says so on
// stderr; when it stops before fn showed anything, fn reads the file.
// fn's errors carry their exit code; any other (opening, closing) is
// dbError's.
func readDB(c *cli.Context, cmd string, fn func(control.View) error) error {
	path, timeout, err := dbArgs(c, cmd)
	if err != nil {
		return err
	}
	held := func(cl *control.Client) {
		getEnv(c).log.Info("the database is held by a running cdclog: answered by it over its control socket",
			"pid", cl.Info().PID, "socket", cl.Path())
	}
	err = control.Read(path, timeout, held, fn)
	var ee *exitError
	if err != nil && !errors.As(err, &ee) {
		return dbError(err)
	}
	return err
}
