package main

import (
	"fmt"

	"github.com/cdclog/cdclog/internal/cligen"
	"github.com/urfave/cli/v2"
)

// completionShells are the shells 'cdclog completion' writes scripts for.
var completionShells = []struct {
	name, install string
	script        func(app string, root *cligen.Command) string
}{
	{"bash", "source <(cdclog completion bash)  # or write it to ~/.local/share/bash-completion/completions/cdclog", cligen.Bash},
	{"zsh", "source <(cdclog completion zsh)   # after compinit; or write it to a directory in $fpath as _cdclog", cligen.Zsh},
	{"fish", "cdclog completion fish | source   # or write it to ~/.config/fish/completions/cdclog.fish", cligen.Fish},
}

func completionCommand() *cli.Command {
	var subs []*cli.Command
	for _, sh := range completionShells {
		subs = append(subs, &cli.Command{
			Name:        sh.name,
			Usage:       "write the " + sh.name + " completion script to stdout",
			UsageText:   "cdclog completion " + sh.name,
			Description: "Load it with:\n   " + sh.install,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageError("completion %s takes no arguments, got %q", sh.name, c.Args().First())
				}
				_, err := fmt.Fprint(c.App.Writer, sh.script(c.App.Name, cligen.Tree(c.App)))
				return withCode(exitFailure, err)
			},
		})
	}
	return &cli.Command{
		Name:        "completion",
		Usage:       "write a shell completion script: bash, zsh or fish",
		UsageText:   "cdclog completion bash|zsh|fish",
		Description: helpText("completion"),
		Subcommands: subs,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("completion: unknown shell %q (want bash, zsh or fish)", c.Args().First())
			}
			return usageError("completion needs a shell: bash, zsh or fish")
		},
	}
}
