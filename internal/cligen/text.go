package cligen

import "strings"

// A block of a description text: a paragraph of prose, or preformatted
// lines (examples, aligned lists), which a description marks by indenting
// them.
type block struct {
	pre   bool
	lines []string
}

// blocks splits a description into paragraphs and preformatted blocks: a
// blank line ends a block, and a run of indented lines is preformatted,
// with its common indentation removed.
func blocks(text string) []block {
	var out []block
	var cur *block
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			cur = nil
			continue
		}
		pre := line[0] == ' ' || line[0] == '\t'
		if cur == nil || cur.pre != pre {
			out = append(out, block{pre: pre})
			cur = &out[len(out)-1]
		}
		cur.lines = append(cur.lines, line)
	}
	for i := range out {
		if out[i].pre {
			out[i].lines = dedent(out[i].lines)
		}
	}
	return out
}

// dedent removes the indentation that all lines share.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[common:]
	}
	return out
}

// usageLines returns a command's usage text as lines, or a synopsis made
// of its name when it has none.
func usageLines(app string, c *Command) []string {
	if strings.TrimSpace(c.UsageText) == "" {
		s := c.Name(app)
		if len(c.Flags) > 0 {
			s += " [options]"
		}
		if len(c.Subcommands) > 0 {
			s += " command"
		}
		return []string{s}
	}
	return strings.Split(strings.TrimSpace(c.UsageText), "\n")
}
