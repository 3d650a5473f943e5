package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectPendingCommand() *cli.Command {
	return inspectView("pending",
		"each pending time: expected update count (or unknown) and distinct updates held",
		"cdclog inspect --db PATH pending [--limit N] [--json]",
		`Lists the times at or above the frontier that the receiver holds something
about, in time order: the number of updates a progress statement says the time
has (EXPECTED, "unknown" until one does), the distinct updates held (HELD) and
how many are still missing. The first row is usually what holds the frontier
back; 'inspect status' says why in words.

With --json it prints JSON Lines, one object per time:
   {"time":"7","expected":"2","held":1}     (expected is null when unknown)
Times and counts are strings, exact beyond 2^53 (docs/inspect.md).

Examples:
   cdclog inspect --db state.db pending
   cdclog inspect --db state.db pending --limit 5 --json`,
		runInspectPending, limitFlag())
}

func runInspectPending(c *cli.Context) error {
	return runView(c, "inspect pending", inspect.Pending)
}
