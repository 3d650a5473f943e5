package cliargs

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// UnknownCommandError is a name on the command line that is none of the
// commands at its level.
type UnknownCommandError struct {
	// Name is the name given; Suggestion the command it most likely
	// meant (Suggest), or "" when none is close.
	Name, Suggestion string
	// Program is the program's name, for the pointer to its help.
	Program string
}

// Error says the name is unknown and what it likely meant, or where the
// commands are listed: "unknown command "x" (did you mean y?)", or "(see
// 'PROGRAM --help')".
func (e *UnknownCommandError) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("unknown command %q (did you mean %s?)", e.Name, e.Suggestion)
	}
	return fmt.Sprintf("unknown command %q (see '%s --help')", e.Name, e.Program)
}

// UnknownCommand returns the error for name, which is none of cmds, the
// commands of the program's level where it was given.
func UnknownCommand(program string, cmds []*cli.Command, name string) *UnknownCommandError {
	return &UnknownCommandError{Name: name, Suggestion: Suggest(name, CommandNames(cmds)), Program: program}
}

// HelpLine rewrites "help COMMAND [SUBCOMMAND...]", a Line whose
// arguments are the names after app's help command, as "COMMAND
// [SUBCOMMAND...] --help", keeping the app's flags, so that the help is
// the same either way. A name that is no command at its level is an
// *UnknownCommandError, and l is returned as it was.
func HelpLine(app *cli.App, l Line) (Line, error) {
	out := Line{Program: l.Program, Flags: [][]string{l.Flags[0]}}
	cmds := app.Commands
	for _, name := range l.Args {
		var found *cli.Command
		for _, c := range cmds {
			if c.HasName(name) {
				found = c
			}
		}
		if found == nil {
			return l, UnknownCommand(app.Name, cmds, name)
		}
		out.Commands = append(out.Commands, name)
		out.Flags = append(out.Flags, nil)
		cmds = found.Subcommands
	}
	out.Flags[len(out.Flags)-1] = append(out.Flags[len(out.Flags)-1], "--help")
	return out, nil
}

// Resolve parses args against app (Parse) and rewrites the ways of asking
// for a help into "COMMAND [SUBCOMMAND...] --help", so that every one shows
// the same page: "help COMMAND [SUB]" (HelpLine), and "COMMAND help [SUB]"
// for a command with subcommands (SubcommandHelp). A name after --help or
// help that is no command is an *UnknownCommandError.
func Resolve(app *cli.App, args []string) (Line, error) {
	line := Parse(app, args)
	if line.Help && len(line.Commands) == 0 && len(line.Args) > 0 {
		return line, UnknownCommand(app.Name, app.Commands, line.Args[0])
	}
	if sub, ok := SubcommandHelp(app, line); ok {
		line = sub
	}
	if len(line.Commands) == 1 && line.Commands[0] == "help" && len(line.Args) > 0 {
		return HelpLine(app, line)
	}
	return unknownBeforeFlags(app, line)
}

// unknownBeforeFlags makes a name that is none of the commands at its
// level the error, rather than a flag: the flags were read against a
// command path that stops short of the command meant ("prog inspct --db
// s.db", "prog consumer remove --db s.db x"), so a flag of that command
// would be reported as not defined, and the name never. At the app's
// level it is an *UnknownCommandError. A command with subcommands takes
// no arguments of its own, so it is left without its flags: its action
// names the unknown one, in its own words ("unknown view").
func unknownBeforeFlags(app *cli.App, l Line) (Line, error) {
	if l.Help || len(l.Args) == 0 {
		return l, nil
	}
	if len(l.Commands) == 0 {
		if len(app.Commands) == 0 {
			return l, nil
		}
		return l, UnknownCommand(app.Name, app.Commands, l.Args[0])
	}
	if c := commandAt(app, l.Commands); c != nil && len(c.Subcommands) > 0 && len(l.Flags) == len(l.Commands)+1 {
		l.Flags = append([][]string(nil), l.Flags...)
		l.Flags[len(l.Flags)-1] = nil
	}
	return l, nil
}

// commandAt returns the command at the path names, or nil.
func commandAt(app *cli.App, names []string) *cli.Command {
	cmd := app.Command(names[0])
	for _, name := range names[1:] {
		if cmd == nil {
			return nil
		}
		cmd = cmd.Command(name)
	}
	return cmd
}

// SubcommandHelp turns "COMMAND help [SUB]" for a command with
// subcommands (such as inspect) into "help COMMAND [SUB]", which
// urfave/cli would otherwise take for an unknown subcommand named help.
// It reports false, and l unchanged, for every other line: for a command
// without subcommands, "help" is an ordinary argument (a file name).
func SubcommandHelp(app *cli.App, l Line) (Line, bool) {
	if len(l.Commands) == 0 || len(l.Args) == 0 || l.Args[0] != "help" {
		return l, false
	}
	if cmd := commandAt(app, l.Commands); cmd == nil || len(cmd.Subcommands) == 0 {
		return l, false
	}
	args := append(append([]string(nil), l.Commands...), l.Args[1:]...)
	return Line{Program: l.Program, Flags: [][]string{l.Flags[0]}, Commands: []string{"help"}, Args: args}, true
}
