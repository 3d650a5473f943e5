package main

import (
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func inspectConsumersCommand() *cli.Command {
	return inspectView("consumers",
		"the registered consumers: committed position and lag",
		"cdclog inspect --db PATH consumers [--json]",
		`Lists the consumers registered through the embedded API
(recovery.Processor.Consumer), by name: the sequence number each reads first
after a restart (the one after the last it committed) and its lag, the
committed output records from there on. gc's retention (gc --retain-output)
never drops a record a registered consumer has not committed, so a consumer
that is gone for good holds the output log back until it is deleted with
'cdclog consumer delete'.

With --json it prints JSON Lines, one object per consumer:
   {"name":"billing","next":1201,"lag":37,"open":false}
"open" is true only when a running processor answered and has the consumer
open.

Examples:
   cdclog inspect --db state.db consumers
   cdclog inspect --db state.db consumers --json | jq 'select(.lag > 10000)'`,
		runInspectConsumers)
}

func runInspectConsumers(c *cli.Context) error {
	return runView(c, view[recovery.ConsumerInfo]{
		name: "inspect consumers",
		what: "read consumers",
		scan: func(_ *cli.Context, r control.View, yield func(*recovery.ConsumerInfo) error) error {
			return yieldEach(r.Consumers, yield)
		},
		json:   func(ci *recovery.ConsumerInfo) any { return ci },
		header: []string{"NAME", "NEXT", "LAG", "OPEN"},
		row: func(ci *recovery.ConsumerInfo) []string {
			return []string{ci.Name, u64(ci.Next), u64(ci.Lag), yesNo(ci.Open)}
		},
		empty: func(control.View) string { return "no consumers" },
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
