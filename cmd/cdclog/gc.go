package main

import (
	"bufio"
	"io"
	"strconv"

	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "drop the WAL below the frontier (its output is committed) and compact the database file",
		UsageText: "cdclog gc --db PATH [--keep-wal N] [--no-compact] [--json] [--lock-timeout D]",
		Description: `Deletes the write-ahead log entries below the frontier: their times are
complete and their output is committed, so nothing needs them to recover.
--keep-wal N keeps the N times just below the frontier, for 'replay
--rederive' of recent history. Then gc compacts the database into a new file
next to it and renames that over the old one (bbolt's Compact), so the disk
space is returned to the file system. The new file keeps the old one's mode
and owner; when --db is a symbolic link, the file it points to is compacted
and the link stays. If gc fails, the database is as it was and the new file
is removed. The frontier, the output log, the checkpoint, consumers and
quarantine are kept intact: 'cdclog ingest' continues afterwards, and
'cdclog replay' still writes the whole stored output.

gc needs the database to itself: while another process holds it, gc says so
after --lock-timeout (0: do not wait). It never creates a database: a
missing path, or an empty file, is an error. It prints what it did: the WAL
floor (the log holds nothing below it), the chunks deleted and the file size
before and after; with --json the same as one JSON object:
   {"floor":"1200","chunks_deleted":31,"bytes_before":16801792,"bytes_after":73728}

Examples:
   cdclog gc --db state.db
   cdclog gc --db state.db --keep-wal 1000
   cdclog gc --db state.db --json`,
		Flags: append(dbFlags(),
			&cli.Uint64Flag{Name: "keep-wal", Usage: "keep the WAL of the `N` times below the frontier"},
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
	prog := newProgress(e, progressOptions{label: "gc " + path})
	res, err := recovery.GC(path, recovery.GCOptions{KeepTimes: c.Uint64("keep-wal"), NoCompact: c.Bool("no-compact"), LockTimeout: timeout})
	prog.finish()
	if err != nil {
		return dbError(err)
	}
	return writeStdout(e, func(w *bufio.Writer) error {
		if c.Bool("json") {
			return writeJSONObject(w, &res)
		}
		return writeGCText(w, path, &res, c.Bool("no-compact"))
	})
}

// writeGCText prints what gc did as aligned "key: value" lines.
func writeGCText(w io.Writer, path string, res *recovery.GCResult, noCompact bool) error {
	var kv keyValues
	kv.add("database", path)
	if res.Floor == 0 {
		kv.add("wal floor", "0 (nothing to drop)")
	} else {
		kv.add("wal floor", u64(res.Floor)+" (the WAL below this time is dropped, whole chunks at a time)")
	}
	kv.add("chunks deleted", strconv.Itoa(res.ChunksDeleted))
	kv.add("size before", humanBytes(res.BytesBefore))
	after := humanBytes(res.BytesAfter)
	if noCompact {
		after += " (not compacted: later writes reuse the freed pages)"
	}
	kv.add("size after", after)
	return kv.write(w)
}
