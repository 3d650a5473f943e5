package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows the advance of a long run (ingest, demangle, replay, gc)
// on stderr, drawn by schollz/progressbar: a bar with rate and ETA when the
// total is known, a spinner with count and rate when it is not.
//
// It draws only when stderr is a terminal and --quiet is off; otherwise
// newProgress returns nil, and every method of a nil *progress does
// nothing, so callers never check. Each call takes a lock: update it once
// per batch, never per message.
type progress struct {
	bar      *progressbar.ProgressBar
	label    string
	total    int64
	bytes    bool
	started  time.Time
	lastDesc time.Time
}

// progressOptions say what a progress counts.
type progressOptions struct {
	// label names the run, e.g. "ingest"; it starts the description.
	label string
	// total is the count at the end; zero or less means unknown (spinner).
	total int64
	// bytes counts bytes (shown as sizes, rate in B/s); otherwise items
	// named unit ("record"). With neither, a spinner shows only the time
	// elapsed.
	bytes bool
	unit  string
}

// progressInterval bounds how often the display is redrawn.
const progressInterval = 150 * time.Millisecond

// newProgress returns a progress drawing on e's stderr, or nil when stderr
// is not a terminal or --quiet is set.
func newProgress(e *env, o progressOptions) *progress {
	if !e.interactive() {
		return nil
	}
	return newProgressTo(e.stderr, o)
}

// newProgressTo returns a progress drawing on w unconditionally (tests).
func newProgressTo(w io.Writer, o progressOptions) *progress {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(o.label),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(progressInterval),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionShowTotalBytes(o.total > 0),
		progressbar.OptionSetPredictTime(o.total > 0),
		progressbar.OptionSetElapsedTime(true),
	}
	switch {
	case o.bytes:
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
	case o.unit != "":
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(o.unit))
	}
	total := o.total
	if total <= 0 {
		total = -1
	}
	now := time.Now()
	return &progress{bar: progressbar.NewOptions64(total, opts...), label: o.label, total: total, bytes: o.bytes, started: now, lastDesc: now}
}

// add advances the count by n.
func (p *progress) add(n int64) {
	if p == nil || n == 0 {
		return
	}
	_ = p.bar.Add64(n) // a display error (a count past a file that grew) is harmless
}

// shrink lowers a known total by n: work that will not be done (input
// ingested by an earlier run).
func (p *progress) shrink(n int64) {
	if p == nil || p.total <= 0 || n <= 0 {
		return
	}
	p.total = max(p.total-n, 1)
	p.bar.ChangeMax64(p.total)
}

// describe sets the text after the label, at most once per
// progressInterval; text is only called when the display is due.
func (p *progress) describe(text func() string) {
	if p == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.lastDesc) < progressInterval {
		return
	}
	p.lastDesc = now
	p.bar.Describe(p.label + " " + text())
}

// rate renders n items per second of the run so far, e.g. "412k msg/s".
func (p *progress) rate(n uint64, unit string) string {
	if p == nil {
		return ""
	}
	secs := max(time.Since(p.started).Seconds(), 1e-3)
	return fmt.Sprintf("%s %s/s", siCount(float64(n)/secs), unit)
}

// clear erases the display so that a log line starts at the left margin;
// the next update draws it again.
func (p *progress) clear() {
	if p == nil {
		return
	}
	_ = p.bar.Clear()
}

// finish erases the display for good (and stops a spinner's timer).
func (p *progress) finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
}

// siCount renders a count with an SI suffix: 950, 12.3k, 4.1M.
func siCount(v float64) string {
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
