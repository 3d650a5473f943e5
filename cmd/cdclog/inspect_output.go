package main

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func inspectOutputCommand() *cli.Command {
	return inspectView("output",
		"the committed clean stream, with sequence numbers",
		"cdclog inspect --db PATH output [--from-seq N] [--limit N] [--json]",
		`Lists the committed output records from sequence number --from-seq on (the
first record is 1): each complete time's updates, then the progress statement
that released them. 'cdclog replay' writes the same records as a stream in
the output format, byte-identical to what 'ingest --out' wrote.

With --json it prints JSON Lines, one object per record:
   {"seq":1,"message":{"update":{"data":"a","time":0,"diff":1}}}

Examples:
   cdclog inspect --db state.db output --limit 20
   cdclog inspect --db state.db output --from-seq 1000 --json`,
		runInspectOutput,
		&cli.Uint64Flag{Name: "from-seq", Value: 1, Usage: "start at sequence number `N`"},
		limitFlag())
}

// outputJSON is one line of 'inspect output --json'.
type outputJSON struct {
	Seq     uint64          `json:"seq"`
	Message json.RawMessage `json:"message"`
}

func runInspectOutput(c *cli.Context) (err error) {
	from, limit := c.Uint64("from-seq"), c.Uint64("limit")
	r, err := openReader(c, "inspect output")
	if err != nil {
		return err
	}
	defer closeReader(r, &err)
	asJSON := wantJSON(c)
	return writeStdout(getEnv(c), func(w *bufio.Writer) error {
		var show func(*recovery.Record) error
		var t *table
		if asJSON {
			jl, buf := newJSONLines(w), []byte(nil)
			show = func(rec *recovery.Record) error {
				buf = cdc.AppendJSON(buf[:0], &rec.Msg)
				return jl.write(&outputJSON{Seq: rec.Seq, Message: buf})
			}
		} else {
			t = newTable(w, "SEQ", "MESSAGE")
			show = func(rec *recovery.Record) error { return t.row(u64(rec.Seq), rec.Msg.String()) }
		}
		var n uint64
		err := r.Records(from, func(rec *recovery.Record) error {
			if limitReached(n, limit) {
				return errLimit
			}
			n++
			return show(rec)
		})
		if err = ignoreLimit(err); err != nil {
			return withCode(exitFailure, fmt.Errorf("read output log: %w", err))
		}
		if t == nil {
			return nil
		}
		if n == 0 { // the header stays unwritten in the table's buffer
			_, err := fmt.Fprintln(w, "no output records from this sequence number on")
			return err
		}
		return t.flush()
	})
}
