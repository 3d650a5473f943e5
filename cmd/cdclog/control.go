package main

import (
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
)

// listenControl answers inspect on the database's control socket for as
// long as p runs, until the returned server's Close (safe to call twice,
// and on nil). Failing to make the socket only costs that, so it is a
// warning, and the server nil.
func listenControl(e *env, db string, p *recovery.Processor) *control.Server {
	s, err := control.Listen(db, p, e.log)
	if err != nil {
		e.log.Warn("no control socket: inspect cannot ask this process while it runs", "err", err)
	}
	return s
}

// openError is a failure to open the database at db for writing (ingest,
// serve, publish): exit code 1, and when another process holds the
// database and answers on its control socket, which process that is and
// what to do.
func openError(db string, err error) error {
	if errors.Is(err, recovery.ErrLocked) {
		if c, derr := control.Dial(db); derr == nil {
			pid := c.Info().PID
			c.Close()
			err = fmt.Errorf("%w: cdclog process %d is writing it (inspect and replay --db read it meanwhile); stop that one first: kill -TERM %d stops it cleanly", err, pid, pid)
		}
	}
	return withCode(exitFailure, err)
}
