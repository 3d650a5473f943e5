package inspect

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cdclog/cdclog/control"
)

// Options say how a view is written.
type Options struct {
	// JSON writes JSON for scripts instead of aligned text for people.
	JSON bool
	// Limit is how many items a list shows at most; 0 shows all.
	Limit uint64
	// Log receives the warnings of a view that leaves something out (a
	// status's broker positions that cannot be decoded); nil discards
	// them.
	Log *slog.Logger
}

func (o *Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// ErrGone is returned by a view whose running process (a control.Client)
// stopped before the view wrote anything: the caller may open the
// database file, free now, and write the view from it (control.Read
// does). Once something was written, the process's going is an error
// like any other. It is control.ErrUnanswered.
var ErrGone = control.ErrUnanswered

// view is one of the views, reduced to its own logic: show does what
// they share (pick text or JSON, apply the limit, write). T is the view's
// item: a status, a pending time, a WAL entry, an output record, a
// quarantined message, a consumer.
type view[T any] struct {
	// scan reads the items from r in order and calls yield on each; it
	// stops, returning yield's error, when yield fails.
	scan func(r control.View, yield func(*T) error) error
	// what names what scan reads, for its errors ("read WAL").
	what string

	// json returns the JSON value of one item: one line of JSON Lines,
	// or with object set the one indented document the view prints.
	json   func(*T) any
	object bool

	// For people: a table with header and one row per item, and empty
	// printed instead when there is no item (the header would be alone);
	// or, when text is set, text writes each item itself.
	header []string
	row    func(*T) []string
	empty  func(r control.View) string
	text   func(w io.Writer, item *T) error
}

// errLimit stops a scan once Limit items were shown.
var errLimit = errors.New("limit reached")

// show writes v as r reads it to w.
func show[T any](w io.Writer, r control.View, v view[T], o Options) error {
	var write func(*T) error
	var t *table
	switch {
	case o.JSON && v.object:
		write = func(item *T) error { return writeJSONObject(w, v.json(item)) }
	case o.JSON:
		jl := newJSONLines(w)
		write = func(item *T) error { return jl.write(v.json(item)) }
	case v.text != nil:
		write = func(item *T) error { return v.text(w, item) }
	default:
		t = newTable(w, v.header...)
		write = func(item *T) error { return t.row(v.row(item)...) }
	}
	var n uint64
	var werr error // a failed write, which the scan returns
	err := v.scan(r, func(item *T) error {
		if o.Limit > 0 && n >= o.Limit {
			return errLimit
		}
		n++
		werr = write(item)
		return werr
	})
	if errors.Is(err, errLimit) {
		err = nil
	}
	if werr != nil && errors.Is(err, werr) {
		return fmt.Errorf("write output: %w", werr) // not a failure to read the database
	}
	if err != nil {
		if n == 0 && errors.Is(err, control.ErrGone) {
			return ErrGone
		}
		return fmt.Errorf("%s: %w", v.what, err)
	}
	if t == nil {
		return nil
	}
	if n == 0 { // the header stays unwritten in the table's buffer
		_, err = fmt.Fprintln(w, v.empty(r))
	} else {
		err = t.flush()
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// each is a view's scan for a reader that returns the whole list at once
// (pending times, consumers): it calls yield on each item in turn.
func each[T any](list func() ([]T, error), yield func(*T) error) error {
	items, err := list()
	if err != nil {
		return err
	}
	for i := range items {
		if err := yield(&items[i]); err != nil {
			return err
		}
	}
	return nil
}
