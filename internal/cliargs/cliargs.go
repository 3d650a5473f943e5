// Package cliargs lets a command line built with urfave/cli v2 take its
// flags anywhere: before or after the command, its subcommand and its
// arguments. urfave/cli v2 hands each level's arguments to Go's flag
// package, which stops at the first argument that is not a flag, so
//
//	cdclog ingest in.jsonl --db s.db --out o.jsonl
//
// would read "--db", "s.db", "--out" and "o.jsonl" as four more input
// files. Parse reads the whole line against the command tree first and
// Line.Strings writes it back in the order urfave expects:
//
//	cdclog [app flags] ingest [ingest's flags] [--] in.jsonl
//
// The rules:
//
//   - A flag is "-name" or "--name", with its value in the same token
//     ("--db=s.db") or, when the flag takes one, in the next token
//     ("--db s.db"). Whether a flag takes a value comes from the command
//     tree (a cli.BoolFlag does not), looked up in the commands named so
//     far, deepest first, and otherwise anywhere in the tree, so that a
//     flag may also come before its command.
//   - Each flag goes to the deepest command on the line that defines it,
//     or to the app when only the app does: global flags given after the
//     command apply as if given before. A flag nobody defines goes to the
//     last command, which then reports it.
//   - "--" ends the flags: everything after it is an argument, even "-x".
//     A lone "-" (stdin) is an argument.
//   - An argument names a subcommand only while the current command has
//     had no argument yet; every other argument belongs to the last
//     command named.
//   - Single-letter boolean flags may be combined ("-qh" is "-q -h").
//   - --help (-h) anywhere asks for the last command's help: Line.Help is
//     set and Strings leaves the arguments out (urfave would read the first
//     as a help topic).
//   - Resolve reports a name that is no command at its level before any
//     flag: an argument of the app is an unknown command, and a command
//     with subcommands is left without its flags, so that its action
//     names the unknown subcommand ("inspct --db s.db" is an unknown
//     command, not an unknown --db).
package cliargs

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Line is a command line read against a command tree.
type Line struct {
	// Program is the program name (the first element of the arguments).
	Program string
	// Commands is the command path, e.g. ["inspect", "status"].
	Commands []string
	// Flags holds each level's flag tokens: Flags[0] the app's,
	// Flags[i] those of Commands[i-1]. A flag's value travels with it.
	Flags [][]string
	// Args are the arguments of the last command (of the app when
	// Commands is empty), in the order given.
	Args []string
	// Help is set when --help (or -h) was given, at any level.
	Help bool
}

// level is the app or one command: its flags and subcommands.
type level struct {
	flags    []cli.Flag
	subs     []*cli.Command
	hideHelp bool
}

func appLevel(app *cli.App) level {
	return level{flags: app.Flags, subs: app.Commands, hideHelp: app.HideHelp}
}

func commandLevel(c *cli.Command) level {
	return level{flags: c.Flags, subs: c.Subcommands, hideHelp: c.HideHelp}
}

// lookup reports whether the level defines the flag name and whether it
// takes a value. urfave adds --help (-h) to every level that does not hide
// it.
func (l level) lookup(name string) (defined, takesValue bool) {
	for _, f := range l.flags {
		for _, n := range f.Names() {
			if n == name {
				return true, TakesValue(f)
			}
		}
	}
	if !l.hideHelp && isHelp(name) {
		return true, false
	}
	return false, false
}

// sub returns the subcommand named name (or aliased), or nil.
func (l level) sub(name string) *cli.Command {
	for _, c := range l.subs {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// TakesValue reports whether a flag reads a value: every flag type but
// cli.BoolFlag does (a flag type that does not say is taken to).
func TakesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return true
}

// flagName returns the name in a flag token ("--db=x" has name "db") and
// whether the token carries its value.
func flagName(tok string) (name string, hasValue bool) {
	name = strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		return name[:i], true
	}
	return name, false
}

// isFlag reports whether an argument is a flag token: "-" alone is not.
func isFlag(arg string) bool {
	return len(arg) > 1 && arg[0] == '-' && arg != "--"
}

// seenFlag is a flag token (and its value) as it appeared on the line.
type seenFlag struct {
	name   string
	tokens []string
}

// Parse reads args (args[0] is the program name) against app's command
// tree. It never fails: what the tree does not know is left for urfave to
// report.
func Parse(app *cli.App, args []string) Line {
	var l Line
	if len(args) == 0 {
		return l
	}
	l.Program = args[0]
	path := []level{appLevel(app)}
	var flags []seenFlag
	endOfFlags := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case endOfFlags:
			l.Args = append(l.Args, a)
		case a == "--":
			endOfFlags = true
		case isFlag(a):
			for _, tok := range splitShort(app, path, a) {
				name, hasValue := flagName(tok)
				f := seenFlag{name: name, tokens: []string{tok}}
				l.Help = l.Help || isHelp(name)
				if !hasValue && takesValue(app, path, name) && i+1 < len(args) {
					i++
					f.tokens = append(f.tokens, args[i])
				}
				flags = append(flags, f)
			}
		default:
			if len(l.Args) == 0 {
				if c := path[len(path)-1].sub(a); c != nil {
					l.Commands = append(l.Commands, a)
					path = append(path, commandLevel(c))
					continue
				}
			}
			l.Args = append(l.Args, a)
		}
	}
	l.Flags = make([][]string, len(path))
	for _, f := range flags {
		at := len(path) - 1 // nobody defines it: the last command reports it
		for j := len(path) - 1; j >= 0; j-- {
			if defined, _ := path[j].lookup(f.name); defined {
				at = j
				break
			}
		}
		l.Flags[at] = append(l.Flags[at], f.tokens...)
	}
	return l
}

// isHelp reports whether name is one of the help flag's names.
func isHelp(name string) bool {
	return cli.HelpFlag != nil && slices.Contains(cli.HelpFlag.Names(), name)
}

// takesValue looks the flag up in the commands named so far, deepest
// first, then anywhere in the tree.
func takesValue(app *cli.App, path []level, name string) bool {
	for j := len(path) - 1; j >= 0; j-- {
		if defined, tv := path[j].lookup(name); defined {
			return tv
		}
	}
	tv := false
	walk(appLevel(app), func(l level) bool {
		if defined, v := l.lookup(name); defined {
			tv = v
			return false
		}
		return true
	})
	return tv
}

// walk calls fn on l and every level below it, depth first, until fn
// returns false.
func walk(l level, fn func(level) bool) bool {
	if !fn(l) {
		return false
	}
	for _, c := range l.subs {
		if !walk(commandLevel(c), fn) {
			return false
		}
	}
	return true
}

// splitShort splits combined single-letter boolean flags ("-qh" into "-q",
// "-h") when the token is not a flag name of its own.
func splitShort(app *cli.App, path []level, tok string) []string {
	if len(tok) < 3 || tok[1] == '-' || strings.ContainsRune(tok, '=') {
		return []string{tok}
	}
	name := tok[1:]
	if known(app, path, name) {
		return []string{tok}
	}
	var out []string
	for _, r := range name {
		s := string(r)
		if !known(app, path, s) || takesValue(app, path, s) {
			return []string{tok}
		}
		out = append(out, "-"+s)
	}
	return out
}

// known reports whether some level defines the flag name.
func known(app *cli.App, path []level, name string) bool {
	for _, l := range path {
		if defined, _ := l.lookup(name); defined {
			return true
		}
	}
	found := false
	walk(appLevel(app), func(l level) bool {
		found, _ = l.lookup(name)
		return !found
	})
	return found
}

// Strings writes the line in the order urfave/cli v2 parses: the program,
// the app's flags, then each command followed by its flags, then the
// arguments, after "--" when one of them starts with "-" (other than "-").
// With Help the arguments are left out.
func (l Line) Strings() []string {
	out := []string{l.Program}
	if len(l.Flags) > 0 {
		out = append(out, l.Flags[0]...)
	}
	for i, c := range l.Commands {
		out = append(out, c)
		if i+1 < len(l.Flags) {
			out = append(out, l.Flags[i+1]...)
		}
	}
	if l.Help {
		return out
	}
	for _, a := range l.Args {
		if isFlag(a) || a == "--" {
			out = append(out, "--")
			break
		}
	}
	return append(out, l.Args...)
}
