package main

import (
	"bufio"
	"fmt"

	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "verify a database: bbolt's consistency check, every record's checksum, the cross-checks",
		UsageText: "cdclog check --db PATH [--json] [--max-problems N] [--lock-timeout D]",
		Description: `Reads the whole database, read-only, and says whether it is intact, in the
spirit of 'bbolt check':
   bbolt         bbolt's own consistency check of the file: every page
                 reachable once or free, keys in order
   records       every record of every bucket: its CRC-32C checksum and its
                 encoding; the write-ahead log's chunks against their index;
                 the output log's chunks following one another, and its
                 steps (each progress statement starts where the one before
                 ended and counts exactly the updates released before it)
   cross-checks  the checkpoint against the ends of the logs: the frontier is
                 the upper bound of the last progress statement, the next
                 output record follows the log's last, and so on
   replay        the write-ahead log from the frontier, as every open
                 replays it, releases nothing

It goes on past each problem and lists them all, each with the bucket and
key of the damaged record. A database written before checksums (schema 1)
has none to verify: its records are counted as unverified, and the other
checks still run; the first 'cdclog ingest' or 'cdclog gc' on it upgrades
it, and records written from then on carry checksums.

Exit code 0 only when every check holds; 1 when a problem is found, or
when the database cannot be opened (missing, locked by another process
after --lock-timeout, not a cdclog database, or damaged beyond what bbolt
opens). 'cdclog replay --db PATH --verify' goes further: it re-derives the
whole stream from the write-ahead log and compares it with the output log.

With --json it prints one object: path, schema_version, ok, checks,
pages, buckets (name, records, unverified), wal_entries, output_records,
problems (check, bucket, key, reason) and problems_omitted.

Examples:
   cdclog check --db state.db
   cdclog check --db state.db --json | jq '.problems[] | .bucket + " " + .key'
   cdclog check --db state.db && cdclog gc --db state.db`,
		Flags: append(dbFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object"},
			&cli.IntFlag{Name: "max-problems", Value: recovery.DefaultMaxProblems, Usage: "list at most `N` problems (the rest are counted)"},
		),
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("check"),
		Action:          runCheck,
	}
}

func runCheck(c *cli.Context) error {
	e := getEnv(c)
	path, err := dbPath(c, "check")
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageError("check takes no arguments, got %q", c.Args().Slice())
	}
	o := recovery.CheckOptions{MaxProblems: c.Int("max-problems")}
	if o.MaxProblems == 0 { // the library's default, but not what the flag says:
		o.MaxProblems = -1 // refused as any count below 1
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if o.LockTimeout, err = lockTimeout(c); err != nil {
		return err
	}
	prog := newProgress(e, progress.Options{Label: "check " + path})
	rep, err := recovery.Check(path, o)
	prog.Finish()
	if err != nil {
		return dbError(err)
	}
	err = writeStdout(e, func(w *bufio.Writer) error {
		return inspect.Check(w, &rep, inspect.Options{JSON: c.Bool("json")})
	})
	if err != nil || rep.OK {
		return err
	}
	return withCode(exitFailure, fmt.Errorf("check: %s: %s", path, inspect.ProblemCount(&rep)))
}
