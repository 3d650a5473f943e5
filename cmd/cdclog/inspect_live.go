package main

import (
	"errors"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
	"github.com/urfave/cli/v2"
)

// dbReader is what inspect's views and replay's stored output read: a
// database at rest (*recovery.Reader) or, while another process holds it,
// that process over its control socket (*control.Client).
type dbReader interface {
	Status() (recovery.Status, error)
	Pending() ([]demangle.PendingTime, error)
	Records(from uint64, fn func(*recovery.Record) error) error
	WAL(from, to uint64, fn func(*recovery.WALEntry) error) error
	Quarantine(fn func(*recovery.QuarantineRecord) error) error
	OutputEnd() uint64
	OutputStart() uint64
	Consumers() ([]recovery.ConsumerInfo, error)
	Frontier() (uint64, bool)
	WALFloor() uint64
	Close() error
}

// openView opens the database named by --db read-only; when a running
// cdclog holds it, it asks that process over its control socket instead,
// and says so on stderr. A holder without a socket (an offline command
// such as gc) is waited for, up to --lock-timeout, as before.
func openView(c *cli.Context, cmd string) (dbReader, error) {
	path, err := dbPath(c, cmd)
	if err != nil {
		return nil, err
	}
	timeout, err := lockTimeout(c)
	if err != nil {
		return nil, err
	}
	r, err := recovery.OpenReader(path, store.NoWait)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, recovery.ErrLocked) {
		return nil, dbError(err)
	}
	if cl, cerr := control.Dial(path); cerr == nil {
		getEnv(c).log.Info("the database is held by a running cdclog: answered by it over its control socket",
			"pid", cl.Info().PID, "socket", cl.Path())
		return cl, nil
	}
	r, err = recovery.OpenReader(path, timeout)
	if err != nil {
		return nil, dbError(err)
	}
	return r, nil
}
