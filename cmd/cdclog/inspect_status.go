package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectStatusCommand() *cli.Command {
	return inspectView("status",
		"where the stream stands and why the frontier does not move",
		"cdclog inspect --db PATH status [--json]",
		`Prints the database's state as of its last commit: schema version, the
frontier (every time below it is complete and emitted), the first incomplete
time and why it is incomplete, in plain words:
   waiting for a progress statement covering time T
      no progress statement received so far says how many updates T has;
   time T holds N of M expected updates
      a progress statement says T has M updates and N have arrived.
Then the counts: pending times and updates, messages accepted, duplicates
dropped, violations, skipped and quarantined messages; the write-ahead log's
entries, size and time range; output records committed, the first one the
output log keeps, and the output file; each registered consumer's next record
and lag; the last checkpoint and the database file's size.

With --json it prints the same as one JSON object; docs/inspect.md lists the
fields, whose names and types are stable. Times are strings, exact beyond
2^53; a complete stream has "frontier": null and "complete": true.

Examples:
   cdclog inspect --db state.db status
   cdclog inspect --db state.db status --json | jq '.frontier, .reason'`,
		runInspectStatus)
}
func runInspectStatus(c *cli.Context) error {
	return runView(c, "inspect status", inspect.Status)
}
