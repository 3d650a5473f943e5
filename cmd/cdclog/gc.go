package main

import (
	"bufio"
	"time"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:        "gc",
		Usage:       "drop the WAL below the frontier, and output nothing needs (--retain-output), then compact the database file",
		UsageText:   "cdclog gc --db PATH [--keep-wal N] [--retain-output all|N|DURATION] [--no-compact] [--json] [--lock-timeout D]",
		Description: helpText("gc"),
		Flags: append(dbFlags(),
			&cli.Uint64Flag{Name: "keep-wal", Usage: "keep the WAL of the `N` times below the frontier"},
			&cli.StringFlag{Name: "retain-output", Value: "all", Usage: "output records to keep: `all`, a count N (the last N) or a duration (72h); gc drops older ones that nothing needs"},
			&cli.BoolFlag{Name: "no-compact", Usage: "only delete: freed pages are reused by later writes, the file does not shrink"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"},
		),
		Action: runGC,
	}
}

func runGC(c *cli.Context) error {
	e := getEnv(c)
	path, err := dbPath(c, "gc")
	if err != nil {
		return err
	}
	if err := noArgs(c, "gc"); err != nil {
		return err
	}
	timeout, err := lockTimeout(c)
	if err != nil {
		return err
	}
	retain, err := recovery.ParseRetention(c.String("retain-output"))
	if err != nil {
		return usageError("gc --retain-output: %v", err)
	}
	o := recovery.GCOptions{KeepTimes: c.Uint64("keep-wal"), RetainOutput: retain, NoCompact: c.Bool("no-compact")}
	prog := newProgress(e, progress.Options{Label: "gc " + path})
	res, note, err := gcHeldOrNot(c, e, path, o, timeout)
	prog.Finish()
	if err != nil {
		return dbError(err)
	}
	return writeStdout(e, func(w *bufio.Writer) error {
		return inspect.GC(w, path, &res, note, inspect.Options{JSON: c.Bool("json")})
	})
}

// gcHeldOrNot runs gc on the database at rest or, while a running
// cdclog holds it, by that process online (control.GC); note says what
// was not done (inspect.GCNote).
func gcHeldOrNot(c *cli.Context, e *env, path string, o recovery.GCOptions, timeout time.Duration) (recovery.GCResult, string, error) {
	o.LockTimeout = timeout
	res, held, err := control.GC(c.Context, path, o)
	if held != nil {
		e.log.Info("the database is held by a running cdclog: it dropped the same online; compacting needs the database to itself, so run gc again once it has stopped to shrink the file",
			"pid", held.Info.PID, "socket", held.Socket)
	}
	return res, inspect.GCNote(held, o.NoCompact), err
}
