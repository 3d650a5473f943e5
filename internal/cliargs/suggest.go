package cliargs

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Suggest returns the candidate that a mistyped name most likely meant, or
// "" when none is close: a candidate the name is a prefix of (at least two
// letters, and only one such candidate), else the nearest by edit distance
// (insertions, deletions, substitutions and swaps of adjacent letters)
// within 1 for names up to four letters and 2 for longer ones. Ties go to
// the earlier candidate.
func Suggest(name string, candidates []string) string {
	if name == "" {
		return ""
	}
	var prefixed []string
	for _, c := range candidates {
		if c == name {
			return c
		}
		if len(name) >= 2 && strings.HasPrefix(c, name) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	limit := 1
	if len(name) > 4 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: command and flag names are ASCII.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// CommandNames returns the names and aliases of the visible commands,
// the candidates for Suggest.
func CommandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// FlagNames returns every name of the visible flags, the candidates for
// Suggest.
func FlagNames(flags ...[]cli.Flag) []string {
	var names []string
	for _, fs := range flags {
		for _, f := range fs {
			if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
				continue
			}
			names = append(names, f.Names()...)
		}
	}
	return names
}

// undefinedFlag starts urfave/cli's error for a flag no level defines,
// followed by the name as given without its first dash.
const undefinedFlag = "flag provided but not defined: -"

// FlagSuggestion returns " (did you mean --x?)" (-x for a one-letter
// name) for urfave/cli's error about a flag that is not defined, when one
// of flags, in the order given, is close to it (Suggest); "" for any
// other error, or when none is close.
func FlagSuggestion(err error, flags ...[]cli.Flag) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, undefinedFlag) {
		return ""
	}
	s := Suggest(strings.TrimPrefix(msg, undefinedFlag), FlagNames(flags...))
	switch {
	case s == "":
		return ""
	case len(s) == 1:
		return " (did you mean -" + s + "?)"
	}
	return " (did you mean --" + s + "?)"
}
