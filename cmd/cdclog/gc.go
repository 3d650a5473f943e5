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
		Name:      "gc",
		Usage:     "drop the WAL below the frontier, and output nothing needs (--retain-output), then compact the database file",
		UsageText: "cdclog gc --db PATH [--keep-wal N] [--retain-output all|N|DURATION] [--no-compact] [--json] [--lock-timeout D]",
		Description: `Deletes the write-ahead log entries below the frontier: their times are
complete and their output is committed, so nothing needs them to recover.
--keep-wal N keeps the N times just below the frontier, for 'replay
--rederive' of recent history.

--retain-output says which output records gc may drop as well: all (the
default) keeps every one, as the output log always did; N keeps the last N
records (0: only what something needs); a duration such as 72h keeps the
records committed in that time. Whatever it says, gc never drops a record
that a registered consumer has not committed ('cdclog inspect consumers';
'cdclog consumer delete' removes one that is gone), that the output file, or
an earlier output file the database would catch up, lacks, or that the
output stream of an interrupted run may not have received; and it keeps the
output log's last chunk. Records go in whole chunks (about 32 KiB), so a few
more than asked may stay. Once records are dropped, 'cdclog replay' starts at
the first one kept ('inspect status' shows it), and 'replay --verify' and
'cdclog check' say that they start there.

Then gc compacts the database into a new file next to it and renames that
over the old one (bbolt's Compact), so the disk space is returned to the file
system. The new file keeps the old one's mode and owner; when --db is a
symbolic link, the file it points to is compacted and the link stays. If gc
fails, the database is as it was and the new file is removed. The frontier,
the checkpoint, consumers and quarantine are kept intact: 'cdclog ingest'
continues afterwards.

Compaction is an offline step: gc needs the database to itself. While a
running cdclog (ingest, serve) holds the database, gc asks it, over its
control socket, to drop the same WAL and output online, without compacting:
the freed pages are reused, so the file stops growing; run gc again once it
has stopped to shrink the file. A program that embeds the processor does the
same with recovery.Processor.GC. While another command holds the database,
gc says so after --lock-timeout (0: do not wait). gc never creates a database: a missing path, or an
empty file, is an error. It prints what it did: the WAL floor (the log holds
nothing below it), the chunks deleted, the first output record kept and what
held it there, and the file size before and after; with --json the same as
one JSON object:
   {"floor":"1200","chunks_deleted":31,"output_from":1,"output_chunks_deleted":0,
    "output_records_dropped":0,"output_held_by":"the retention, which keeps every
    record (--retain-output all)","bytes_before":16801792,"bytes_after":73728,
    "compacted":true}

Examples:
   cdclog gc --db state.db
   cdclog gc --db state.db --keep-wal 1000
   cdclog gc --db state.db --retain-output 1000000
   cdclog gc --db state.db --retain-output 72h --json`,
		Flags: append(dbFlags(),
			&cli.Uint64Flag{Name: "keep-wal", Usage: "keep the WAL of the `N` times below the frontier"},
			&cli.StringFlag{Name: "retain-output", Value: "all", Usage: "output records to keep: `all`, a count N (the last N) or a duration (72h); gc drops older ones that nothing needs"},
			&cli.BoolFlag{Name: "no-compact", Usage: "only delete: freed pages are reused by later writes, the file does not shrink"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"},
		),
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("gc"),
		Action:          runGC,
	}
}

func runGC(c *cli.Context) error {
	e := getEnv(c)
	path, err := dbPath(c, "gc")
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageError("gc takes no arguments, got %q", c.Args().Slice())
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
// was not done.
func gcHeldOrNot(c *cli.Context, e *env, path string, o recovery.GCOptions, timeout time.Duration) (recovery.GCResult, string, error) {
	o.LockTimeout = timeout
	res, held, err := control.GC(c.Context, path, o)
	if held != nil {
		e.log.Info("the database is held by a running cdclog: it dropped the same online; compacting needs the database to itself, so run gc again once it has stopped to shrink the file",
			"pid", held.Info.PID, "socket", held.Socket)
		return res, "not compacted: held by a running cdclog, which reuses the freed pages", err
	}
	if o.NoCompact {
		return res, "not compacted: later writes reuse the freed pages", err
	}
	return res, "", err
}
