// Package cligen writes what is derived from a command line's definitions
// (a urfave/cli v2 App): shell completion scripts for bash, zsh and fish,
// a Markdown page per command and a man page. Everything is generated from
// the same tree, so a new command or flag appears in all of them without
// anyone listing it, and the output depends on nothing but the tree:
// tests regenerate it and compare with the checked-in files.
package cligen

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// Command is one node of the tree as the generators see it: the app
// itself (Path empty) or a command.
type Command struct {
	// Path is the command's names from the app down, e.g.
	// ["inspect", "status"].
	Path        []string
	Aliases     []string
	Usage       string
	UsageText   string
	Description string
	Flags       []Flag
	Subcommands []*Command
}

// Name returns the command's full name: "cdclog inspect status".
func (c *Command) Name(app string) string {
	return strings.Join(append([]string{app}, c.Path...), " ")
}

// Flag is one visible flag.
type Flag struct {
	// Names are the flag's names without dashes, the main one first.
	Names []string
	// Value is the placeholder of its value ("PATH"), "" for a flag
	// without value.
	Value string
	Usage string
	// Default is the default value as --help shows it, "" when none.
	Default string
	// Choices are the values the usage text lists ("...: a, b or c"),
	// offered by the completion scripts.
	Choices []string
}

// Spelled returns how the flag is written: "--db" or "-q".
func Spelled(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Tree returns app's visible commands and flags. urfave's --help flag is
// added to every level, as urfave does when it runs.
func Tree(app *cli.App) *Command {
	root := &Command{Usage: app.Usage, UsageText: app.UsageText, Description: app.Description,
		Flags: flags(app.Flags, !app.HideHelp)}
	root.Subcommands = commands(app.Commands, nil)
	return root
}

func commands(cmds []*cli.Command, parent []string) []*Command {
	var out []*Command
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		path := append(append([]string(nil), parent...), c.Name)
		n := &Command{Path: path, Aliases: c.Aliases, Usage: c.Usage, UsageText: c.UsageText,
			Description: c.Description, Flags: flags(c.Flags, !c.HideHelp)}
		n.Subcommands = commands(c.Subcommands, path)
		out = append(out, n)
	}
	return out
}

// choicesRE finds a list of values at the end of a usage text: "...:
// fail, skip or quarantine".
var choicesRE = regexp.MustCompile(`: ([a-z][a-z0-9-]*(?:, [a-z][a-z0-9-]*)* or [a-z][a-z0-9-]*)$`)

func flags(fs []cli.Flag, help bool) []Flag {
	var out []Flag
	seenHelp := false
	for _, f := range fs {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		placeholder, usage := unquoteUsage(d.GetUsage())
		fl := Flag{Names: f.Names(), Usage: usage}
		if d.TakesValue() {
			fl.Value = placeholder
			if fl.Value == "" {
				fl.Value = "value"
			}
			fl.Default = d.GetDefaultText()
			if fl.Default == "" {
				fl.Default = d.GetValue()
			}
			if fl.Default == `""` {
				fl.Default = ""
			}
			if m := choicesRE.FindStringSubmatch(usage); m != nil {
				fl.Choices = strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
			}
		}
		seenHelp = seenHelp || fl.Names[0] == "help"
		out = append(out, fl)
	}
	if help && !seenHelp && cli.HelpFlag != nil {
		if d, ok := cli.HelpFlag.(cli.DocGenerationFlag); ok {
			out = append(out, Flag{Names: cli.HelpFlag.Names(), Usage: d.GetUsage()})
		}
	}
	return out
}

// Walk calls fn on c and every command below it, depth first.
func (c *Command) Walk(fn func(*Command)) {
	fn(c)
	for _, s := range c.Subcommands {
		s.Walk(fn)
	}
}

// ValueFlags returns every spelling of every flag in the tree that takes
// a value, sorted and without repeats.
func (c *Command) ValueFlags() []string {
	seen := map[string]bool{}
	var out []string
	c.Walk(func(n *Command) {
		for _, f := range n.Flags {
			if f.Value == "" {
				continue
			}
			for _, name := range f.Names {
				if s := Spelled(name); !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	})
	sortStrings(out)
	return out
}

// Choices returns, for each flag spelling whose usage lists its values,
// those values.
func (c *Command) Choices() map[string][]string {
	out := map[string][]string{}
	c.Walk(func(n *Command) {
		for _, f := range n.Flags {
			if len(f.Choices) == 0 {
				continue
			}
			for _, name := range f.Names {
				out[Spelled(name)] = f.Choices
			}
		}
	})
	return out
}

// unquoteUsage returns the placeholder a usage text names in backquotes
// ("bbolt database `PATH`") and the text without them, as urfave's help
// does.
func unquoteUsage(usage string) (placeholder, text string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}
