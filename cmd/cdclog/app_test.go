package main

import (
	"io"
	"testing"

	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// TestEveryFlagNameHasOneMeaning guards what flags-anywhere relies on (see
// package cliargs): a flag given before its command is read by its name
// alone, so a name must take a value everywhere or nowhere; and a global
// flag given after a command reaches the app only if no command defines
// the same name.
func TestEveryFlagNameHasOneMeaning(t *testing.T) {
	app := newApp(nil, io.Discard, io.Discard)
	global := map[string]bool{}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			global[n] = true
		}
	}
	takes := map[string]bool{}
	where := map[string]string{}
	var walk func(path string, flags []cli.Flag, subs []*cli.Command)
	walk = func(path string, flags []cli.Flag, subs []*cli.Command) {
		for _, f := range flags {
			for _, n := range f.Names() {
				if path != "cdclog" && global[n] {
					t.Errorf("%s defines --%s, a global flag", path, n)
				}
				if prev, ok := takes[n]; ok && prev != cliargs.TakesValue(f) {
					t.Errorf("--%s takes a value in %s but not in %s, or the reverse", n, path, where[n])
				}
				takes[n], where[n] = cliargs.TakesValue(f), path
			}
		}
		for _, c := range subs {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("cdclog", app.Flags, app.Commands)
	if len(where) < 20 {
		t.Fatalf("only %d flag names found: the walk missed the tree", len(where))
	}
}
