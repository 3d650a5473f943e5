package main

import (
	"bufio"
	"fmt"

	"github.com/cdclog/cdclog/demangle"
	"github.com/urfave/cli/v2"
)

func inspectPendingCommand() *cli.Command {
	return inspectView("pending",
		"each pending time: expected update count (or unknown) and distinct updates held",
		"cdclog inspect --db PATH pending [--limit N] [--json]",
		`Lists the times at or above the frontier that the receiver holds something
about, in time order: the number of updates a progress statement says the time
has (EXPECTED, "unknown" until one does), the distinct updates held (HELD) and
how many are still missing. The first row is usually what holds the frontier
back; 'inspect status' says why in words.

With --json it prints JSON Lines, one object per time:
   {"time":7,"expected":2,"held":1}     (expected is null when unknown)

Examples:
   cdclog inspect --db state.db pending
   cdclog inspect --db state.db pending --limit 5 --json`,
		runInspectPending, limitFlag())
}

// pendingJSON is one line of 'inspect pending --json'.
type pendingJSON struct {
	Time     uint64  `json:"time"`
	Expected *uint64 `json:"expected"`
	Held     int     `json:"held"`
}

func runInspectPending(c *cli.Context) (err error) {
	r, err := openReader(c, "inspect pending")
	if err != nil {
		return err
	}
	defer closeReader(r, &err)
	pending, err := r.Pending()
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("read pending times: %w", err))
	}
	if limit := c.Uint64("limit"); limit > 0 && uint64(len(pending)) > limit {
		pending = pending[:limit]
	}
	return writeStdout(getEnv(c), func(w *bufio.Writer) error {
		if wantJSON(c) {
			return writePendingJSON(w, pending)
		}
		if len(pending) == 0 {
			f, complete := r.Frontier()
			_, err := fmt.Fprintf(w, "no pending times (%s)\n", frontierText(f, complete))
			return err
		}
		return writePendingTable(w, pending)
	})
}

func writePendingJSON(w *bufio.Writer, pending []demangle.PendingTime) error {
	jl := newJSONLines(w)
	for _, p := range pending {
		line := pendingJSON{Time: p.Time, Held: p.Held}
		if p.Known {
			line.Expected = &p.Expected
		}
		if err := jl.write(&line); err != nil {
			return err
		}
	}
	return nil
}

func writePendingTable(w *bufio.Writer, pending []demangle.PendingTime) error {
	t := newTable(w, "TIME", "EXPECTED", "HELD", "MISSING")
	for _, p := range pending {
		expected, missing := "unknown", "?"
		if p.Known {
			expected = u64(p.Expected)
			missing = fmt.Sprint(int64(p.Expected) - int64(p.Held))
		}
		if err := t.row(u64(p.Time), expected, fmt.Sprint(p.Held), missing); err != nil {
			return err
		}
	}
	return t.flush()
}
