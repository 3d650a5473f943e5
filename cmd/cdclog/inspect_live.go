package main

import (
	"github.com/cdclog/cdclog/control"
	"github.com/urfave/cli/v2"
)

// openView opens the database named by --db read-only; when a running
// cdclog holds it, it asks that process over its control socket instead
// (control.OpenView), and says so on stderr.
func openView(c *cli.Context, cmd string) (control.View, error) {
	path, err := dbPath(c, cmd)
	if err != nil {
		return nil, err
	}
	timeout, err := lockTimeout(c)
	if err != nil {
		return nil, err
	}
	v, err := control.OpenView(path, timeout)
	if err != nil {
		return nil, dbError(err)
	}
	if cl, ok := v.(*control.Client); ok {
		getEnv(c).log.Info("the database is held by a running cdclog: answered by it over its control socket",
			"pid", cl.Info().PID, "socket", cl.Path())
	}
	return v, nil
}
