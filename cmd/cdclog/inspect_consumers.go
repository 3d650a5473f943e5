package main

import (
	"github.com/cdclog/cdclog/inspect"
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
	return runView(c, "inspect consumers", inspect.Consumers)
}
