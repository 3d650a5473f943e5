package main

import (
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
)

// controlSocket is a running command's control socket; nil (none could be
// made) does nothing.
type controlSocket struct{ s *control.Server }

// listenControl answers inspect on the database's control socket for as
// long as p runs. Failing to make the socket only costs that, so it is a
// warning.
func listenControl(e *env, db string, p *recovery.Processor) *controlSocket {
	s, err := control.Listen(db, p, e.log)
	if err != nil {
		e.log.Warn("no control socket: inspect cannot ask this process while it runs", "err", err)
		return &controlSocket{}
	}
	return &controlSocket{s: s}
}

// close stops answering and removes the socket.
func (c *controlSocket) close() {
	if c.s != nil {
		c.s.Close()
		c.s = nil
	}
}
