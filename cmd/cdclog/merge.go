package main

import (
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/ordering"
	"github.com/urfave/cli/v2"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge shards' JSON Lines records into one total order",
		UsageText: "cdclog merge [--on-error fail|skip|quarantine] [--quarantine FILE] FILE...",
		Description: `Reads one JSON Lines file per shard ("-" is stdin) and writes every record,
unchanged and exactly once, to stdout in total order: by meta.created_at
(epoch seconds, integer or fractional, or an RFC 3339 date-time), then by
meta.sequence_number (a decimal integer of any length, compared as a number),
then by arrival. A record without meta.created_at or meta.sequence_number
takes dynamodb.ApproximateCreationDateTime or dynamodb.SequenceNumber instead,
as DynamoDB stream records carry them.

A record is written only when every shard still being read has a record
waiting, so the order holds across the whole files. Each shard is read and
parsed ahead on its own thread, in chunks, and memory stays bounded whatever
the files' size: about 20 MiB for up to 64 shards, then about 150 KiB more
per shard.
Each shard's own order is always kept: a record whose key is below its
predecessor's in the same file is reported as out of order and written after
that predecessor.

A line without a usable key (not a JSON object, a field missing or malformed,
longer than 16 MiB) is an error naming file and line. With --on-error fail (the
default) the command stops there with exit code 1: records already written
stay, nothing more is written. skip reports each such line on stderr and goes
on; quarantine writes each to the --quarantine file as JSON Lines
{"source","line","reason","raw"} ("raw_base64" instead of "raw" when the line
is not UTF-8; "truncated" when only the first KiB of an over-long line is kept).

Exit codes: 0 success, 1 bad line (under fail), missing file or write error,
2 usage error.

Examples:
   cdclog merge shard-a.jsonl shard-b.jsonl > merged.jsonl
   cdclog merge --on-error quarantine --quarantine rejected.jsonl shards/*.jsonl > merged.jsonl`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for a line without a usable key: fail, skip or quarantine"},
			&cli.StringFlag{Name: "quarantine", Usage: "with --on-error quarantine: JSON Lines `FILE` that receives rejected lines"},
		},
		HideHelpCommand: true,
		// A bad flag is a usage error (exit 2); the app-level hook does not
		// reach subcommands.
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError("merge: %v", err)
		},
		Action: runMerge,
	}
}

// mergeOptions is the merge command line, checked.
type mergeOptions struct {
	merge   ordering.MergeOptions
	rejects *rejectSink
	files   []string
}

func parseMergeOptions(c *cli.Context) (mergeOptions, error) {
	e := getEnv(c)
	o := mergeOptions{rejects: &rejectSink{name: c.String("quarantine")}, merge: ordering.MergeOptions{Log: e.log}}
	var err error
	if o.merge.OnError, err = cdc.ParseErrorPolicy(c.String("on-error")); err != nil {
		return o, usageError("--on-error: %v", err)
	}
	if o.rejects.name != "" {
		o.merge.Quarantine = o.rejects
	}
	if err := o.merge.Validate(); err != nil {
		return o, err
	}
	if e.inFormat != cdc.JSONL || e.outFormat != cdc.JSONL {
		return o, usageError("merge reads and writes JSON Lines only")
	}
	o.files = c.Args().Slice()
	if len(o.files) == 0 {
		return o, usageError("merge needs at least one FILE (one per shard)")
	}
	return o, nil
}

func runMerge(c *cli.Context) error {
	opts, err := parseMergeOptions(c)
	if err != nil {
		return err
	}
	e := getEnv(c)
	shards, closeAll, err := ordering.OpenShards(opts.files, e.stdin)
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer closeAll()
	rejects := opts.rejects
	if err := rejects.open(e, opts.files); err != nil {
		return err
	}
	start := time.Now()
	var p *progress.Counter // nil, drawing nothing, unless stderr is a terminal
	if e.interactive() {
		p = progress.NewCounter(e.stderr, "merged", start)
	}
	opts.merge.Progress = p.Draw
	stats, err := ordering.MergeJSONL(c.Context, shards, e.stdout, opts.merge)
	if qerr := rejects.close(); err == nil {
		err = qerr
	}
	p.Clear()
	summarizeMerge(e, stats, rejects.name, time.Since(start), err)
	return withCode(exitFailure, err)
}

func summarizeMerge(e *env, st ordering.MergeStats, quarantine string, elapsed time.Duration, err error) {
	args := []any{"shards", st.Shards, "records", st.Written, "elapsed", elapsed.Round(time.Millisecond)}
	if st.Skipped > 0 {
		args = append(args, "skipped", st.Skipped)
	}
	if st.Quarantined > 0 {
		args = append(args, "quarantined", st.Quarantined, "quarantine", quarantine)
	}
	if st.OutOfOrder > 0 {
		args = append(args, "out_of_order", st.OutOfOrder)
	}
	switch {
	case err != nil:
		e.log.Info("merge stopped", args...)
	case st.Skipped+st.Quarantined+st.OutOfOrder > 0:
		e.log.Warn("merge done", args...)
	default:
		e.log.Info("merge done", args...)
	}
}
