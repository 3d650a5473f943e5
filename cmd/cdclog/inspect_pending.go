package main

import (
	"fmt"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/progress"
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
   {"time":"7","expected":"2","held":1}     (expected is null when unknown)
Times and counts are strings, exact beyond 2^53 (docs/inspect.md).

Examples:
   cdclog inspect --db state.db pending
   cdclog inspect --db state.db pending --limit 5 --json`,
		runInspectPending, limitFlag())
}

// pendingJSON is one line of 'inspect pending --json'. A time, and the
// count a progress statement gives it, may exceed 2^53: they are strings
// (docs/inspect.md).
type pendingJSON struct {
	Time     uint64  `json:"time,string"`
	Expected *uint64 `json:"expected,string"`
	Held     int     `json:"held"`
}

func runInspectPending(c *cli.Context) error {
	return runView(c, view[demangle.PendingTime]{
		name: "inspect pending",
		what: "read pending times",
		scan: func(_ *cli.Context, r control.View, yield func(*demangle.PendingTime) error) error {
			return yieldEach(r.Pending, yield)
		},
		json: func(p *demangle.PendingTime) any {
			line := pendingJSON{Time: p.Time, Held: p.Held}
			if p.Known {
				line.Expected = &p.Expected
			}
			return &line
		},
		header: []string{"TIME", "EXPECTED", "HELD", "MISSING"},
		row: func(p *demangle.PendingTime) []string {
			expected, missing := "unknown", "?"
			if p.Known {
				expected = u64(p.Expected)
				missing = fmt.Sprint(int64(p.Expected) - int64(p.Held))
			}
			return []string{u64(p.Time), expected, fmt.Sprint(p.Held), missing}
		},
		empty: func(r control.View) string {
			f, complete := r.Frontier()
			return fmt.Sprintf("no pending times (%s)", progress.FrontierText(f, complete))
		},
	})
}
