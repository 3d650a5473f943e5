package cligen

import (
	"fmt"
	"strings"
)

// MarkdownFile returns the name of the Markdown page of a top-level
// command (or of the app, for the root): "cdclog.md", "cdclog-ingest.md".
func MarkdownFile(app string, c *Command) string {
	if len(c.Path) == 0 {
		return app + ".md"
	}
	return app + "-" + c.Path[0] + ".md"
}

// Markdown returns a page per top-level command, and one for the app that
// lists the global options and links to the others, by file name. A
// command's subcommands are sections of its page. regenerate is the
// command that rewrites the pages, named in a comment at their top.
func Markdown(app, regenerate string, root *Command) map[string]string {
	pages := map[string]string{}
	top := fmt.Sprintf("<!-- Generated from %s's command definitions: do not edit. Regenerate with\n     %s -->\n\n", app, regenerate)

	var b strings.Builder
	b.WriteString(top)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", app, mdEscape(root.Usage))
	mdPre(&b, usageLines(app, root))
	mdBlocks(&b, root.Description)
	b.WriteString("## Commands\n\n| command | does |\n|---|---|\n")
	for _, c := range root.Subcommands {
		fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", c.Name(app), MarkdownFile(app, c), mdCell(c.Usage))
	}
	b.WriteString("\n## Global options\n\nThese apply to every command, and may be given before or after it.\n\n")
	mdFlags(&b, root.Flags)
	pages[MarkdownFile(app, root)] = b.String()

	for _, c := range root.Subcommands {
		b.Reset()
		b.WriteString(top)
		mdCommand(&b, app, c, 1)
		pages[MarkdownFile(app, c)] = b.String()
	}
	return pages
}

// mdCommand writes a command's section at heading level, then its
// subcommands' one level deeper.
func mdCommand(b *strings.Builder, app string, c *Command, level int) {
	fmt.Fprintf(b, "%s %s\n\n%s\n\n", strings.Repeat("#", level), c.Name(app), mdEscape(c.Usage))
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Also: `%s`.\n\n", strings.Join(c.Aliases, "`, `"))
	}
	mdPre(b, usageLines(app, c))
	mdBlocks(b, c.Description)
	if len(c.Flags) > 0 {
		fmt.Fprintf(b, "%s Options\n\n", strings.Repeat("#", level+1))
		mdFlags(b, c.Flags)
		fmt.Fprintf(b, "The [global options](%s#global-options) apply too.\n\n", app+".md")
	}
	for _, s := range c.Subcommands {
		mdCommand(b, app, s, level+1)
	}
}

// mdFlags writes a table of flags.
func mdFlags(b *strings.Builder, flags []Flag) {
	b.WriteString("| option | default | meaning |\n|---|---|---|\n")
	for _, f := range flags {
		var names []string
		for _, n := range f.Names {
			s := Spelled(n)
			if f.Value != "" {
				s += " " + f.Value
			}
			names = append(names, "`"+s+"`")
		}
		def := ""
		if f.Default != "" {
			def = "`" + strings.ReplaceAll(f.Default, "|", `\|`) + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", strings.Join(names, ", "), def, mdCell(f.Usage))
	}
	b.WriteString("\n")
}

// mdBlocks writes a description: prose as paragraphs, indented runs as
// code blocks.
func mdBlocks(b *strings.Builder, text string) {
	for _, bl := range blocks(text) {
		if bl.pre {
			mdPre(b, bl.lines)
			continue
		}
		for _, l := range bl.lines {
			b.WriteString(mdEscape(l))
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// mdPre writes lines as a fenced code block.
func mdPre(b *strings.Builder, lines []string) {
	b.WriteString("```\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString("```\n\n")
}

// mdEscape escapes the characters that Markdown would read as markup in
// prose, and a "#" that starts a line.
func mdEscape(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `<`, `&lt;`, `>`, `&gt;`).Replace(s)
	if strings.HasPrefix(s, "#") {
		s = `\` + s
	}
	return s
}

// mdCell is mdEscape for a table cell, where "|" ends the cell.
func mdCell(s string) string {
	return strings.ReplaceAll(mdEscape(s), "|", `\|`)
}
