package main

import (
	"fmt"
	"os"
)

// inputProgress follows a run through its input (ingest, demangle,
// replay FILE): bytes read, so a bar with an ETA, when every input is a
// regular file of known size; messages read, on a spinner, otherwise. The
// description adds the messages, their rate and the frontier. A nil
// *inputProgress does nothing.
type inputProgress struct {
	p      *progress
	msgs   uint64
	offset int64 // how far into the current input the bar has counted
}

// newInputProgress returns the display for a run over the named inputs
// ("-" or "" is stdin; none means stdin), or nil when it is off.
func newInputProgress(e *env, label string, names []string) *inputProgress {
	if !e.interactive() {
		return nil
	}
	o := progressOptions{label: label, unit: "msg"}
	if size, ok := inputSize(names); ok {
		o.total, o.bytes = size, true
	}
	return &inputProgress{p: newProgressTo(e.stderr, o)}
}

// inputSize is the total size of the inputs, when every one is a regular
// file.
func inputSize(names []string) (int64, bool) {
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

// startInput notes that the next input is read from offset on (ingest
// resuming where an earlier run stopped): the bytes before it are not
// work left.
func (ip *inputProgress) startInput(offset int64) {
	if ip == nil {
		return
	}
	ip.p.shrink(offset)
	ip.offset = offset
}

// batch counts msgs more messages, read up to offset in the current
// input. frontier is called only when the description is redrawn.
func (ip *inputProgress) batch(offset int64, msgs int, frontier func() (uint64, bool)) {
	if ip == nil {
		return
	}
	ip.msgs += uint64(msgs)
	if ip.p.bytes {
		ip.p.add(offset - ip.offset)
		ip.offset = offset
	} else {
		ip.p.add(int64(msgs))
	}
	ip.p.describe(func() string {
		f := frontierText(frontier())
		if !ip.p.bytes {
			return f // the spinner shows the count and rate itself
		}
		return fmt.Sprintf("%s msgs, %s, %s", siCount(float64(ip.msgs)), ip.p.rate(ip.msgs, "msg"), f)
	})
}

// clear erases the display before a log line.
func (ip *inputProgress) clear() {
	if ip != nil {
		ip.p.clear()
	}
}

// finish erases the display for good.
func (ip *inputProgress) finish() {
	if ip != nil {
		ip.p.finish()
	}
}

// frontierText renders a frontier for people.
func frontierText(t uint64, complete bool) string {
	if complete {
		return "complete"
	}
	return fmt.Sprintf("frontier %d", t)
}
