package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectPendingCommand() *cli.Command {
	return inspectView("pending",
		"each pending time: expected update count (or unknown) and distinct updates held",
		"cdclog inspect --db PATH pending [--limit N] [--json]",
		helpText("inspect-pending"),
		runInspectPending, limitFlag())
}

func runInspectPending(c *cli.Context) error {
	return runView(c, "inspect pending", inspect.Pending)
}
