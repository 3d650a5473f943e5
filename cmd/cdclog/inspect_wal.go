package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func inspectWALCommand() *cli.Command {
	return inspectView("wal",
		"the messages stored in the write-ahead log",
		"cdclog inspect --db PATH wal [--from-time T] [--to-time T] [--limit N] [--json]",
		`Lists the accepted messages stored in the write-ahead log whose filing time
lies in [--from-time, --to-time]: an update is filed under its time, a
progress statement under the last time it covers. For each: the time, the
arrival number (the order in which messages were accepted), where it was
read (file:line, or file: byte N for msgpack) and the message. The listing
follows the log's keys: by time within each group commit, not globally.
Times below the WAL floor were dropped by 'cdclog gc'.

With --json it prints JSON Lines, one object per message:
   {"time":7,"arrival":12,"source":"in.jsonl","line":3,"offset":120,
    "message":{"update":{"data":"a","time":7,"diff":1}}}

Examples:
   cdclog inspect --db state.db wal --limit 20
   cdclog inspect --db state.db wal --from-time 100 --to-time 100
   cdclog inspect --db state.db wal --json | jq -c .message`,
		runInspectWAL,
		&cli.Uint64Flag{Name: "from-time", Usage: "only messages filed at time `T` or later"},
		&cli.Uint64Flag{Name: "to-time", Value: math.MaxUint64, DefaultText: "no bound", Usage: "only messages filed at time `T` or earlier"},
		limitFlag())
}

// walJSON is one line of 'inspect wal --json'.
type walJSON struct {
	Time    uint64          `json:"time"`
	Arrival uint64          `json:"arrival"`
	Source  string          `json:"source"`
	Line    int64           `json:"line"`
	Offset  int64           `json:"offset"`
	Message json.RawMessage `json:"message"`
}

func runInspectWAL(c *cli.Context) (err error) {
	from, to, limit := c.Uint64("from-time"), c.Uint64("to-time"), c.Uint64("limit")
	if to < from {
		return usageError("inspect wal: --to-time %d is before --from-time %d", to, from)
	}
	r, err := openReader(c, "inspect wal")
	if err != nil {
		return err
	}
	defer closeReader(r, &err)
	asJSON := wantJSON(c)
	return writeStdout(getEnv(c), func(w *bufio.Writer) error {
		var show func(*recovery.WALEntry) error
		var t *table
		if asJSON {
			jl, buf := newJSONLines(w), []byte(nil)
			show = func(we *recovery.WALEntry) error {
				buf = cdc.AppendJSON(buf[:0], &we.Msg)
				return jl.write(&walJSON{Time: we.Time, Arrival: we.Arrival, Source: we.Pos.Source,
					Line: we.Pos.Line, Offset: we.Pos.Offset, Message: buf})
			}
		} else {
			t = newTable(w, "TIME", "ARRIVAL", "POSITION", "MESSAGE")
			show = func(we *recovery.WALEntry) error {
				return t.row(u64(we.Time), u64(we.Arrival), we.Pos.String(), we.Msg.String())
			}
		}
		var n uint64
		err := r.WAL(from, to, func(we *recovery.WALEntry) error {
			if limitReached(n, limit) {
				return errLimit
			}
			n++
			return show(we)
		})
		if err = ignoreLimit(err); err != nil {
			return withCode(exitFailure, fmt.Errorf("read WAL: %w", err))
		}
		if t == nil {
			return nil
		}
		if n == 0 { // the header stays unwritten in the table's buffer
			_, err := fmt.Fprintln(w, "no WAL entries in the time range")
			return err
		}
		return t.flush()
	})
}
