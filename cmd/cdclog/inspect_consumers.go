package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectConsumersCommand() *cli.Command {
	return inspectView("consumers",
		"the registered consumers: committed position and lag",
		"cdclog inspect --db PATH consumers [--json]",
		helpText("inspect-consumers"),
		runInspectConsumers)
}

func runInspectConsumers(c *cli.Context) error {
	return runView(c, "inspect consumers", inspect.Consumers)
}
