package main

import (
	"bufio"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func inspectQuarantineCommand() *cli.Command {
	return inspectView("quarantine",
		"rejected input kept by --on-error quarantine, with position and reason",
		"cdclog inspect --db PATH quarantine [--limit N] [--json]",
		`Lists the input that 'ingest --on-error quarantine' set aside, oldest first:
malformed messages and protocol violations, each with where it was read, why
it was rejected, when, and its raw bytes.

With --json it prints JSON Lines, one object per rejected message:
   {"seq":1,"source":"in.jsonl","line":3,"offset":120,"reason":"…",
    "time":"2026-01-02T03:04:05Z","raw":"{\"update\":…}"}
raw holds the bytes as text when they are UTF-8; otherwise raw is absent and
raw_base64 holds them in base64.

Examples:
   cdclog inspect --db state.db quarantine
   cdclog inspect --db state.db quarantine --json | jq -r .raw > rejected.jsonl`,
		runInspectQuarantine, limitFlag())
}

// quarantineJSON is one line of 'inspect quarantine --json': the reject as
// in a quarantine file, with its number and when it was set aside.
type quarantineJSON struct {
	Seq uint64 `json:"seq"`
	cdc.RejectLine
	Time string `json:"time"`
}

func runInspectQuarantine(c *cli.Context) (err error) {
	limit := c.Uint64("limit")
	r, err := openReader(c, "inspect quarantine")
	if err != nil {
		return err
	}
	defer closeReader(r, &err)
	asJSON := wantJSON(c)
	return writeStdout(getEnv(c), func(w *bufio.Writer) error {
		var show func(*recovery.QuarantineRecord) error
		var t *table
		if asJSON {
			jl := newJSONLines(w)
			show = func(q *recovery.QuarantineRecord) error { return jl.write(quarantineLine(q)) }
		} else {
			t = newTable(w, "SEQ", "POSITION", "REASON", "RAW")
			show = func(q *recovery.QuarantineRecord) error {
				return t.row(u64(q.Seq), q.Pos.String(), q.Reason, rawText(q.Raw, 60))
			}
		}
		var n uint64
		err := r.Quarantine(func(q *recovery.QuarantineRecord) error {
			if limitReached(n, limit) {
				return errLimit
			}
			n++
			return show(q)
		})
		if err = ignoreLimit(err); err != nil {
			return withCode(exitFailure, fmt.Errorf("read quarantine: %w", err))
		}
		if t != nil {
			if n == 0 { // the header stays unwritten in the table's buffer
				_, err := fmt.Fprintln(w, "no quarantined messages")
				return err
			}
			return t.flush()
		}
		return nil
	})
}

func quarantineLine(q *recovery.QuarantineRecord) *quarantineJSON {
	return &quarantineJSON{Seq: q.Seq, RejectLine: q.QuarantineLine(), Time: q.Time.Format(time.RFC3339Nano)}
}
