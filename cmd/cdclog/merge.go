package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/ordering"
	"github.com/urfave/cli/v2"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:        "merge",
		Usage:       "merge shards' JSON Lines records into one total order",
		UsageText:   "cdclog merge [--on-error fail|skip|quarantine] [--quarantine FILE] FILE...",
		Description: helpText("merge"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for a line without a usable key: fail, skip or quarantine"},
			&cli.StringFlag{Name: "quarantine", Usage: "with --on-error quarantine: JSON Lines `FILE` that receives rejected lines"},
		},
		// A bad flag is a usage error (exit 2); the app-level hook does not
		// reach subcommands.
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError("merge: %s", flagText(err))
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
	if o.merge.OnError, err = onErrorPolicy(c); err != nil {
		return o, err
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
	// The merged records go to stdout: when that is the terminal the
	// display would be drawn on, the two would share its lines.
	e.stdoutStream = true
	var p *progress.Counter // nil, drawing nothing, unless stderr is a terminal (and stdout is not)
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

// summarizeMerge logs merge's one summary line (ordering.MergeStats.LogAttrs):
// "merge stopped" after an error, else "merge done", a warning when the
// merge was flawed.
func summarizeMerge(e *env, st ordering.MergeStats, quarantine string, elapsed time.Duration, err error) {
	level, msg := slog.LevelInfo, "merge done"
	switch {
	case err != nil:
		msg = "merge stopped"
	case st.Flawed():
		level = slog.LevelWarn
	}
	e.log.LogAttrs(context.Background(), level, msg, st.LogAttrs(elapsed, quarantine)...)
}
