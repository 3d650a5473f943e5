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
		`Lists the committed output records from sequence number --from-seq on (the
first record is 1; by default the first the output log holds, which after gc
--retain-output may be later): each complete time's updates, then the
progress statement that released them. A --from-seq below what gc kept is an
error that says where the log starts. 'cdclog replay' writes the same records as a stream in
the output format, byte-identical to what 'ingest --out' wrote.

With --json it prints JSON Lines, one object per record:
   {"seq":1,"message":{"update":{"data":"a","time":0,"diff":1}}}

Examples:
   cdclog inspect --db state.db output --limit 20
   cdclog inspect --db state.db output --from-seq 1000 --json`,
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
