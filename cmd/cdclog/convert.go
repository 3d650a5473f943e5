package main

import (
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/clean"
	"github.com/urfave/cli/v2"
)

func convertCommand() *cli.Command {
	return &cli.Command{
		Name:      "convert",
		Usage:     "turn a naive stream (updates and finish messages) into a CDC stream",
		UsageText: "cdclog convert [FILE]",
		Description: `Reads a naive stream (FILE, or stdin when FILE is absent or "-"): updates, and
{"finish":{"time":T}} messages saying that every time up to T is over. Writes
the CDC stream to stdout: the diffs of each (data, time) are summed and sums of
zero dropped; each finish writes the finished times' updates (by time, then
data) and one progress statement covering every time since the previous
finish (from 0 for the first).

Stops with exit code 1, naming file and line: malformed input, a progress
statement (the input is already a CDC stream), an update or finish at a time
an earlier finish closed (naming that finish too), a finish whose times hold
a sum of diffs beyond 64 bits (sums are exact, so the order of the diffs does
not matter). What was converted before is written.

Updates of times that no finish closes are written at the end without
progress, with a warning on stderr: a receiver will never see those times
complete.

Examples:
   cdclog gen --kind naive | cdclog convert | cdclog demangle
   cdclog convert naive.jsonl > cdc.jsonl
   cdclog --in-format msgpack convert naive.mp > cdc.jsonl`,
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("convert"),
		Action:          runConvert,
	}
}

func runConvert(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError("convert takes at most one FILE, got %d", c.NArg())
	}
	e := getEnv(c)
	in, name, closeIn, err := openInput(e, c.Args().First())
	if err != nil {
		return err
	}
	defer closeIn()
	res, err := clean.Convert(cdc.NewReader(in, e.inFormat, name), cdc.NewWriter(e.stdout, e.outFormat))
	if res.Unfinished > 0 {
		e.log.Warn("input ended before a finish for every time it touched: updates written without progress",
			"updates", res.Unfinished, "from_time", res.UnfinishedFrom)
	}
	logSummary(e, "convert finished", slog.Uint64("updates_in", res.UpdatesIn), slog.Uint64("finishes", res.Finishes), slog.Uint64("updates_out", res.UpdatesOut))
	return withCode(exitFailure, err)
}
