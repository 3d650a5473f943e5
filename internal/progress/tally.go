package progress

import "io"

// A Tally is the display of a count whose total is only known when the
// work starts, told as "done of total so far" rather than in steps, such
// as the records a replay writes (inspect.StreamOptions.Progress): the
// first Report draws a Bar of that total (a spinner for 0), the later
// ones move it to done. A nil *Tally does nothing.
type Tally struct {
	w     io.Writer
	o     Options
	bar   *Bar
	shown int64
}

// NewTally returns a Tally drawing on w a Bar of o, whose Total the first
// Report sets.
func NewTally(w io.Writer, o Options) *Tally {
	return &Tally{w: w, o: o}
}

// Report shows that done of total are done; total counts only at the
// first call.
func (t *Tally) Report(done, total int64) {
	if t == nil {
		return
	}
	if t.bar == nil {
		t.o.Total = total
		t.bar = New(t.w, t.o)
	}
	t.bar.Add(done - t.shown)
	t.shown = done
}

// Finish erases the display for good (Bar.Finish); nothing if nothing was
// reported.
func (t *Tally) Finish() {
	if t == nil {
		return
	}
	t.bar.Finish()
}
