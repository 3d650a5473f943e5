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
		`Lists the accepted messages stored in the write-ahead log whose filing time
lies in [--from-time, --to-time]: an update is filed under its time, a
progress statement under the last time it covers. For each: the time, the
arrival number (the order in which messages were accepted), where it was
read (file:line, or file: byte N for msgpack) and the message. The listing
follows the log's keys: by time within each group commit, not globally.
Times below the WAL floor were dropped by 'cdclog gc'.

With --json it prints JSON Lines, one object per message:
   {"time":"7","arrival":12,"source":"in.jsonl","line":3,"offset":120,
    "message":{"update":{"data":"a","time":7,"diff":1}}}
The filing time is a string, exact beyond 2^53 (docs/inspect.md).

Examples:
   cdclog inspect --db state.db wal --limit 20
   cdclog inspect --db state.db wal --from-time 100 --to-time 100
   cdclog inspect --db state.db wal --json | jq -c .message`,
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
