package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar shows the advance of a run, drawn by schollz/progressbar: a bar
// with rate and ETA when the total is known, a spinner with count and rate
// when it is not. A nil *Bar does nothing.
type Bar struct {
	bar      *progressbar.ProgressBar
	label    string
	total    int64
	bytes    bool
	started  time.Time
	lastDesc time.Time
}

// Options say what a Bar counts.
type Options struct {
	// Label names the run, e.g. "ingest"; it starts the description.
	Label string
	// Total is the count at the end; zero or less means unknown (spinner).
	Total int64
	// Bytes counts bytes (shown as sizes, rate in B/s); otherwise items
	// named Unit ("record"). With neither, a spinner shows only the time
	// elapsed.
	Bytes bool
	Unit  string
}

// Interval bounds how often a Bar is redrawn.
const Interval = 150 * time.Millisecond

// New returns a Bar drawing on w.
func New(w io.Writer, o Options) *Bar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(o.Label),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(Interval),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionShowTotalBytes(o.Total > 0),
		progressbar.OptionSetPredictTime(o.Total > 0),
		progressbar.OptionSetElapsedTime(true),
	}
	switch {
	case o.Bytes:
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
	case o.Unit != "":
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(o.Unit))
	}
	total := o.Total
	if total <= 0 {
		total = -1
	}
	now := time.Now()
	return &Bar{bar: progressbar.NewOptions64(total, opts...), label: o.Label, total: total, bytes: o.Bytes, started: now, lastDesc: now}
}

// Add advances the count by n.
func (p *Bar) Add(n int64) {
	if p == nil || n == 0 {
		return
	}
	_ = p.bar.Add64(n) // a display error (a count past a file that grew) is harmless
}

// Shrink lowers a known total by n: work that will not be done (input
// ingested by an earlier run).
func (p *Bar) Shrink(n int64) {
	if p == nil || p.total <= 0 || n <= 0 {
		return
	}
	p.total = max(p.total-n, 1)
	p.bar.ChangeMax64(p.total)
}

// Describe sets the text after the label, at most once per Interval;
// text is only called when the display is due.
func (p *Bar) Describe(text func() string) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.lastDesc) < Interval {
		return
	}
	p.lastDesc = now
	p.bar.Describe(p.label + " " + text())
}

// Rate renders n items per second of the run so far, e.g. "412k msg/s".
func (p *Bar) Rate(n uint64, unit string) string {
	if p == nil {
		return ""
	}
	secs := max(time.Since(p.started).Seconds(), 1e-3)
	return fmt.Sprintf("%s %s/s", SI(float64(n)/secs), unit)
}

// Clear erases the display so that a log line starts at the left margin;
// the next update draws it again.
func (p *Bar) Clear() {
	if p == nil {
		return
	}
	_ = p.bar.Clear()
}

// Finish erases the display for good (and stops a spinner's timer).
func (p *Bar) Finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
}

// SI renders a count with an SI suffix: 950, 12.3k, 4.1M.
func SI(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
