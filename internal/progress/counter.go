package progress

import (
	"fmt"
	"io"
	"time"
)

// Counter shows a count of records and their rate on one line, redrawn
// in place at most once a second: "merged 1200 records (4800/s)". A nil
// *Counter does nothing.
type Counter struct {
	w        io.Writer
	verb     string
	start    time.Time
	lastDraw time.Time
}

// NewCounter returns a Counter drawing on w, the line starting with verb
// ("merged"); the rate is counted from start.
func NewCounter(w io.Writer, verb string, start time.Time) *Counter {
	return &Counter{w: w, verb: verb, start: start}
}

// Draw shows n records done, unless the line was drawn less than a second
// ago.
func (p *Counter) Draw(n int64) {
	if p == nil || time.Since(p.lastDraw) < time.Second {
		return
	}
	p.lastDraw = time.Now()
	rate := float64(n) / time.Since(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%s %d records (%.0f/s)  ", p.verb, n, rate)
}

// Clear erases the line, if one was drawn.
func (p *Counter) Clear() {
	if p != nil && !p.lastDraw.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
