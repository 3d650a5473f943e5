package main

import (
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
