package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectStatusCommand() *cli.Command {
	return inspectView("status",
		"where the stream stands and why the frontier does not move",
		"cdclog inspect --db PATH status [--json]",
		helpText("inspect-status"),
		runInspectStatus)
}
func runInspectStatus(c *cli.Context) error {
	return runView(c, "inspect status", inspect.Status)
}
