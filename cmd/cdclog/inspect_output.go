package main

import (
	"encoding/json"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
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

// outputJSON is one line of 'inspect output --json'.
type outputJSON struct {
	Seq     uint64          `json:"seq"`
	Message json.RawMessage `json:"message"`
}

func runInspectOutput(c *cli.Context) error {
	var buf []byte
	return runView(c, view[recovery.Record]{
		name: "inspect output",
		what: "read output log",
		scan: func(c *cli.Context, r control.View, yield func(*recovery.Record) error) error {
			from := c.Uint64("from-seq")
			if !c.IsSet("from-seq") {
				from = r.OutputStart() // the first record gc's retention kept
			}
			return r.Records(from, yield)
		},
		json: func(rec *recovery.Record) any {
			buf = cdc.AppendJSON(buf[:0], &rec.Msg)
			return &outputJSON{Seq: rec.Seq, Message: buf}
		},
		header: []string{"SEQ", "MESSAGE"},
		row:    func(rec *recovery.Record) []string { return []string{u64(rec.Seq), rec.Msg.String()} },
		empty:  func(control.View) string { return "no output records from this sequence number on" },
	})
}
