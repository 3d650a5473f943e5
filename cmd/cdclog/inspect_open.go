package main

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
	"github.com/urfave/cli/v2"
)

// This file holds what the commands on an existing database (inspect,
// replay, gc) share: reading --db and --lock-timeout (flags.go defines
// them), opening, and the error an operator sees when the database is busy
// or missing.

// givenIn returns the nearest context in c's lineage where the flag name
// was given, or c when it was given nowhere.
func givenIn(c *cli.Context, name string) *cli.Context {
	for _, x := range c.Lineage() {
		if x.Command != nil && x.IsSet(name) {
			return x
		}
	}
	return c
}

// dbPath returns --db, or a usage error when it is missing.
func dbPath(c *cli.Context, cmd string) (string, error) {
	p := givenIn(c, "db").String("db")
	if p == "" {
		return "", usageError("%s needs --db PATH", cmd)
	}
	return p, nil
}

// dbArgs returns --db (dbPath) and the wait of --lock-timeout
// (lockTimeout).
func dbArgs(c *cli.Context, cmd string) (string, time.Duration, error) {
	path, err := dbPath(c, cmd)
	if err != nil {
		return "", 0, err
	}
	timeout, err := lockTimeout(c)
	return path, timeout, err
}

// lockTimeout returns --lock-timeout as the wait to give store.Open.
func lockTimeout(c *cli.Context) (time.Duration, error) {
	return lockWait(givenIn(c, "lock-timeout").Duration("lock-timeout"))
}

// lockWait turns a --lock-timeout into the wait to give store.Open: 0
// means try once and do not wait (store.NoWait), and a negative value is
// a usage error.
func lockWait(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, usageError("--lock-timeout %v: give 0 (do not wait) or a positive duration", d)
	case d == 0:
		return store.NoWait, nil
	}
	return d, nil
}

// openReader opens the database named by --db read-only, for the
// commands that read the file itself and are never answered over a
// running cdclog's control socket (replay --rederive and --verify):
// while another process holds the database, its error says so, since the
// holder may well be an ingest or a serve that does have a socket.
func openReader(c *cli.Context, cmd string) (*recovery.Reader, error) {
	path, timeout, err := dbArgs(c, cmd)
	if err != nil {
		return nil, err
	}
	r, err := recovery.OpenReader(path, timeout)
	if errors.Is(err, recovery.ErrLocked) {
		return nil, readsFileItself(err, cmd, "'cdclog replay --db PATH' (the stored output)")
	}
	if err != nil {
		return nil, dbError(err)
	}
	return r, nil
}

// readsFileItself is the runtime failure of command cmd, which reads the
// database file itself and is never answered over a running cdclog's
// control socket, when another process holds the file (err wraps
// recovery.ErrLocked): the holder may well be an ingest or a serve that
// has a socket, so it names the command (instead) that would ask it.
func readsFileItself(err error, cmd, instead string) error {
	return withCode(exitFailure, fmt.Errorf("%w; %s reads the file itself, so run it once the cdclog that has it open (an ingest, a serve or a gc) has stopped, or raise --lock-timeout; %s asks a running ingest or serve", err, cmd, instead))
}

// dbError makes an error opening a database a runtime failure (exit code
// 1) that tells the operator what to do.
func dbError(err error) error {
	switch {
	case errors.Is(err, control.ErrUnresponsive):
		err = fmt.Errorf("%w; retry once it answers again, or stop it", err)
	case errors.Is(err, recovery.ErrLocked):
		err = fmt.Errorf("%w; another cdclog (a gc, or a process without a control socket) has it open, so retry when it is done or raise --lock-timeout", err)
	case errors.Is(err, recovery.ErrNotExist):
		err = fmt.Errorf("%w (check --db; 'cdclog ingest --db PATH' creates one)", err)
	}
	return withCode(exitFailure, err)
}

// writeStdout runs fn on a buffered stdout and flushes it; a write error
// is a runtime failure.
func writeStdout(e *env, fn func(w *bufio.Writer) error) error {
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	err := fn(w)
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = withCode(exitFailure, fmt.Errorf("write output: %w", ferr))
	}
	return err
}
