package main

import (
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectQuarantineCommand() *cli.Command {
	return inspectView("quarantine",
		"rejected input kept by --on-error quarantine, with position and reason",
		"cdclog inspect --db PATH quarantine [--limit N] [--json]",
		helpText("inspect-quarantine"),
		runInspectQuarantine, limitFlag())
}

func runInspectQuarantine(c *cli.Context) error {
	return runView(c, "inspect quarantine", inspect.Quarantine)
}
