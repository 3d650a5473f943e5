package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/cdclog/cdclog/control"
	"github.com/urfave/cli/v2"
)

// view is one of inspect's views, reduced to its own logic: runView does
// what they share (open the database read-only, pick text or JSON, apply
// --limit, write to stdout). T is the view's item: a status, a pending
// time, a WAL entry, an output record, a quarantined message.
type view[T any] struct {
	// name is the view's command line ("inspect wal"), for errors.
	name string
	// scan reads the items from r in order and calls yield on each; it
	// stops, returning yield's error, when yield fails.
	scan func(c *cli.Context, r control.View, yield func(*T) error) error
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

// runView runs v on the database that --db names. When the running
// process that answered for the database stops before the view has shown
// anything, the view is read from the file, once it is free.
func runView[T any](c *cli.Context, v view[T]) (err error) {
	r, err := openView(c, v.name)
	if err != nil {
		return err
	}
	err = showView(c, v, r)
	if errors.Is(err, errGoneBeforeAnswer) {
		r.Close()
		if r, err = openReader(c, v.name); err != nil {
			return err
		}
		err = showView(c, v, r)
	}
	closeReader(r, &err)
	return err
}

// errGoneBeforeAnswer: the process answering for the database stopped
// before the view showed anything.
var errGoneBeforeAnswer = errors.New("the running cdclog stopped before answering")

// yieldEach is a view's scan for a reader that returns the whole list at
// once (pending times, consumers): it calls yield on each item in turn.
func yieldEach[T any](list func() ([]T, error), yield func(*T) error) error {
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

// showView shows v as r reads it.
func showView[T any](c *cli.Context, v view[T], r control.View) error {
	limit := c.Uint64("limit") // 0 (all) for views without --limit
	asJSON := wantJSON(c)
	return writeStdout(getEnv(c), func(w *bufio.Writer) error {
		var show func(*T) error
		var t *table
		switch {
		case asJSON && v.object:
			show = func(item *T) error { return writeJSONObject(w, v.json(item)) }
		case asJSON:
			jl := newJSONLines(w)
			show = func(item *T) error { return jl.write(v.json(item)) }
		case v.text != nil:
			show = func(item *T) error { return v.text(w, item) }
		default:
			t = newTable(w, v.header...)
			show = func(item *T) error { return t.row(v.row(item)...) }
		}
		var n uint64
		err := v.scan(c, r, func(item *T) error {
			if limitReached(n, limit) {
				return errLimit
			}
			n++
			return show(item)
		})
		if err = ignoreLimit(err); err != nil {
			if n == 0 && errors.Is(err, control.ErrGone) {
				return errGoneBeforeAnswer
			}
			return withCode(exitFailure, fmt.Errorf("%s: %w", v.what, err))
		}
		if t == nil {
			return nil
		}
		if n == 0 { // the header stays unwritten in the table's buffer
			_, err := fmt.Fprintln(w, v.empty(r))
			return err
		}
		return t.flush()
	})
}
