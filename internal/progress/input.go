package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Input follows a run through its input (ingest, demangle, replay FILE):
// bytes read, so a bar with an ETA, when every input is a regular file of
// known size; messages read, on a spinner, otherwise. The description adds
// the messages, their rate and the frontier. A nil *Input does nothing.
// Its methods may be called concurrently (ingest's broker inputs each
// report from a goroutine of their own): they take turns.
type Input struct {
	mu     sync.Mutex
	p      *Bar
	msgs   uint64
	offset int64 // how far into the current input the bar has counted
}

// NewInput returns the display on w of a run labelled label over the
// named inputs ("-" or "" is stdin; none means stdin).
func NewInput(w io.Writer, label string, names []string) *Input {
	o := Options{Label: label, Unit: "msg"}
	if size, ok := InputSize(names); ok {
		o.Total, o.Bytes = size, true
	}
	return &Input{p: New(w, o)}
}

// InputSize is the total size of the named inputs, when every one is a
// regular file ("-" or "" is stdin, whose size is not known).
func InputSize(names []string) (int64, bool) {
	var total int64
	for _, n := range names {
		if n == "" || n == "-" {
			return 0, false
		}
		fi, err := os.Stat(n)
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		total += fi.Size()
	}
	return total, len(names) > 0
}

// StartInput notes that the next input is read from offset on (ingest
// resuming where an earlier run stopped): the bytes before it are not
// work left.
func (ip *Input) StartInput(offset int64) {
	if ip == nil {
		return
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	ip.p.Shrink(offset)
	ip.offset = offset
}

// Batch counts msgs more messages, read up to offset in the current
// input. frontier is called only when the description is redrawn.
func (ip *Input) Batch(offset int64, msgs int, frontier func() (uint64, bool)) {
	if ip == nil {
		return
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	ip.msgs += uint64(msgs)
	if ip.p.bytes {
		ip.p.Add(offset - ip.offset)
		ip.offset = offset
	} else {
		ip.p.Add(int64(msgs))
	}
	ip.p.Describe(func() string {
		f := FrontierText(frontier())
		if !ip.p.bytes {
			return f // the spinner shows the count and rate itself
		}
		return fmt.Sprintf("%s msgs, %s, %s", SI(float64(ip.msgs)), ip.p.Rate(ip.msgs, "msg"), f)
	})
}

// Clear erases the display before a log line.
func (ip *Input) Clear() {
	if ip != nil {
		ip.mu.Lock()
		defer ip.mu.Unlock()
		ip.p.Clear()
	}
}

// Finish erases the display for good.
func (ip *Input) Finish() {
	if ip != nil {
		ip.mu.Lock()
		defer ip.mu.Unlock()
		ip.p.Finish()
	}
}

// FrontierText renders a frontier for people: "frontier T", or
// "complete".
func FrontierText(t uint64, complete bool) string {
	if complete {
		return "complete"
	}
	return fmt.Sprintf("frontier %d", t)
}
