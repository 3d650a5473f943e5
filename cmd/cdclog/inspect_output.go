package main

import (
	"io"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/urfave/cli/v2"
)

func inspectOutputCommand() *cli.Command {
	return inspectView("output",
		"the committed clean stream, with sequence numbers",
		"cdclog inspect --db PATH output [--from-seq N] [--limit N] [--json]",
		helpText("inspect-output"),
		runInspectOutput,
		&cli.Uint64Flag{Name: "from-seq", Value: 1, DefaultText: "the first record kept", Usage: "start at sequence number `N`"},
		limitFlag())
}

func runInspectOutput(c *cli.Context) error {
	return runView(c, "inspect output", func(w io.Writer, r control.View, o inspect.Options) error {
		from := c.Uint64("from-seq")
		if !c.IsSet("from-seq") {
			from = r.OutputStart() // the first record gc's retention kept
		}
		return inspect.Output(w, r, from, o)
	})
}
