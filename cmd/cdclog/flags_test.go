package main

import (
	"io"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestSetupCommandsReachesEveryCommand: newApp gives every command and
// subcommand a usage-error handler and no "help" subcommand of its own,
// so a command added later cannot miss them.
func TestSetupCommandsReachesEveryCommand(t *testing.T) {
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := path + c.Name
			if c.OnUsageError == nil {
				t.Errorf("%s has no OnUsageError", name)
			}
			if !c.HideHelpCommand {
				t.Errorf("%s would get a help subcommand", name)
			}
			walk(name+" ", c.Subcommands)
		}
	}
	walk("", newApp(nil, io.Discard, io.Discard).Commands)
}
