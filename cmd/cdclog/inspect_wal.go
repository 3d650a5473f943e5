package main

import (
	"io"
	"math"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectWALCommand() *cli.Command {
	return inspectView("wal",
		"the messages stored in the write-ahead log",
		"cdclog inspect --db PATH wal [--from-time T] [--to-time T] [--limit N] [--json]",
		helpText("inspect-wal"),
		runInspectWAL,
		&cli.Uint64Flag{Name: "from-time", Usage: "only messages filed at time `T` or later"},
		&cli.Uint64Flag{Name: "to-time", Value: math.MaxUint64, DefaultText: "no bound", Usage: "only messages filed at time `T` or earlier"},
		limitFlag())
}

func runInspectWAL(c *cli.Context) error {
	from, to := c.Uint64("from-time"), c.Uint64("to-time")
	if to < from {
		return usageError("inspect wal: --to-time %d is before --from-time %d", to, from)
	}
	return runView(c, "inspect wal", func(w io.Writer, r control.View, o inspect.Options) error {
		return inspect.WAL(w, r, from, to, o)
	})
}
