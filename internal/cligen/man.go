package cligen

import (
	"fmt"
	"strings"
)

// Man returns the app's manual page in section 1, in roff (the man
// macros): the app's synopsis, description and global options, then every
// command with its usage, description and options. It carries no date, so
// it changes only when the definitions do. regenerate is the command that
// rewrites it, named in a comment.
func Man(app, regenerate string, root *Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".\\\" Generated from %s's command definitions: do not edit. Regenerate with\n.\\\"   %s\n", app, regenerate)
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(app), app)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(app), roff(root.Usage))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n", roff(app))
	b.WriteString(".SH DESCRIPTION\n")
	manBlocks(&b, root.Description)
	b.WriteString(".SH GLOBAL OPTIONS\n")
	manFlags(&b, root.Flags)
	b.WriteString(".SH COMMANDS\n")
	for _, c := range root.Subcommands {
		c.Walk(func(n *Command) { manCommand(&b, app, n) })
	}
	fmt.Fprintf(&b, ".SH SEE ALSO\nA page per command, in Markdown: \\fIdocs/cli/\\fR in the source.\n")
	return b.String()
}

func manCommand(b *strings.Builder, app string, c *Command) {
	fmt.Fprintf(b, ".SS %s\n%s\n", roff(c.Name(app)), roffLine(c.Usage))
	manPre(b, usageLines(app, c))
	manBlocks(b, c.Description)
	if len(c.Flags) > 0 {
		b.WriteString(".PP\nOptions:\n")
		manFlags(b, c.Flags)
	}
}

// manFlags writes each flag as a tagged paragraph.
func manFlags(b *strings.Builder, flags []Flag) {
	for _, f := range flags {
		var names []string
		for _, n := range f.Names {
			s := `\fB` + roff(Spelled(n)) + `\fR`
			if f.Value != "" {
				s += ` \fI` + roff(f.Value) + `\fR`
			}
			names = append(names, s)
		}
		text := f.Usage
		if f.Default != "" {
			text += " (default: " + f.Default + ")"
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", strings.Join(names, ", "), roffLine(text))
	}
}

// manBlocks writes a description: prose as filled paragraphs, indented
// runs unfilled and indented.
func manBlocks(b *strings.Builder, text string) {
	for _, bl := range blocks(text) {
		if bl.pre {
			manPre(b, bl.lines)
			continue
		}
		b.WriteString(".PP\n")
		for _, l := range bl.lines {
			b.WriteString(roffLine(l))
			b.WriteString("\n")
		}
	}
}

// manPre writes lines unfilled, indented.
func manPre(b *strings.Builder, lines []string) {
	b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		b.WriteString(roffLine(l))
		b.WriteString("\n")
	}
	b.WriteString(".fi\n.RE\n")
}

// roff escapes text for roff: backslashes, hyphens as the minus sign that
// options and commands are typed with, and every non-ASCII character as
// a \[uXXXX] escape (troff reads its input as Latin-1 unless preconv ran).
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffLine is roff for a whole input line, which must not start with a
// control character.
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
