package cligen

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A completion context is a command path the scripts recognize (the words
// that name commands so far, "" at the start): the subcommand names it
// offers, and its flags.
type compContext struct {
	path  string
	subs  []named
	flags []Flag // the command's own flags, without the app's
}

type named struct{ name, desc string }

// contexts lists the completion contexts of the tree: every command, and
// for a "help" command the tree again below it ("help inspect" offers
// inspect's subcommands).
func contexts(root *Command) []compContext {
	var out []compContext
	var help *Command
	root.Walk(func(c *Command) {
		out = append(out, compContext{path: strings.Join(c.Path, " "), subs: subNames(c, ""), flags: c.Flags})
		if len(c.Path) == 1 && c.Path[0] == "help" {
			help = c
		}
	})
	if help != nil {
		root.Walk(func(c *Command) {
			if len(c.Subcommands) == 0 {
				return
			}
			p := strings.TrimSpace("help " + strings.Join(c.Path, " "))
			i := slices.IndexFunc(out, func(x compContext) bool { return x.path == p })
			subs := subNames(c, "help")
			if i >= 0 {
				out[i].subs = subs
			} else {
				out = append(out, compContext{path: p, subs: subs})
			}
		})
	}
	return out
}

// subNames lists c's subcommands (and their aliases), leaving out skip.
func subNames(c *Command, skip string) []named {
	var out []named
	for _, s := range c.Subcommands {
		last := s.Path[len(s.Path)-1]
		if last == skip {
			continue
		}
		for _, n := range append([]string{last}, s.Aliases...) {
			out = append(out, named{n, s.Usage})
		}
	}
	return out
}

func subWords(subs []named) string {
	var w []string
	for _, s := range subs {
		w = append(w, s.name)
	}
	return strings.Join(w, " ")
}

// flagSpellings returns every spelling of the flags, in order.
func flagSpellings(fs []Flag) []string {
	var out []string
	for _, f := range fs {
		for _, n := range f.Names {
			out = append(out, Spelled(n))
		}
	}
	return out
}

// choiceCases groups the flags with listed values by their values, for a
// case statement: "--format|--in-format" -> "jsonl msgpack", sorted.
func choiceCases(root *Command) [][2]string {
	byValues := map[string][]string{}
	for flag, values := range root.Choices() {
		v := strings.Join(values, " ")
		byValues[v] = append(byValues[v], flag)
	}
	var out [][2]string
	for v, flags := range byValues {
		sortStrings(flags)
		out = append(out, [2]string{strings.Join(flags, "|"), v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// header is the comment at the top of every script.
func header(app, shell, install string) string {
	return fmt.Sprintf(`# %s completion for %s: commands, flags, their listed values and
# inspect's views. Generated from the command definitions by
# '%s completion %s'; do not edit, regenerate.
#
%s
`, shell, app, app, shell, install)
}

// Bash returns the bash completion script for the app named app.
func Bash(app string, root *Command) string {
	var b strings.Builder
	fn := "_" + identifier(app)
	b.WriteString(header(app, "bash", fmt.Sprintf(`#   source <(%[1]s completion bash)        # in this shell
#   %[1]s completion bash > ~/.local/share/bash-completion/completions/%[1]s`, app)))
	fmt.Fprintf(&b, "\n%s_subcommands() {\n\tcase \"$1\" in\n", fn)
	ctxs := contexts(root)
	for _, c := range ctxs {
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "\t%s) echo %s ;;\n", shQuote(c.path), shQuote(subWords(c.subs)))
		}
	}
	b.WriteString("\tesac\n}\n")
	global := flagSpellings(root.Flags)
	fmt.Fprintf(&b, "\n%s_flags() {\n\tcase \"$1\" in\n", fn)
	for _, c := range ctxs {
		if c.path == "" || len(c.flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\t%s) echo %s ;;\n", shQuote(c.path), shQuote(strings.Join(mergeFlags(flagSpellings(c.flags), global), " ")))
	}
	fmt.Fprintf(&b, "\t*) echo %s ;;\n\tesac\n}\n", shQuote(strings.Join(global, " ")))
	fmt.Fprintf(&b, "\n%s_choices() {\n\tcase \"$1\" in\n", fn)
	for _, c := range choiceCases(root) {
		fmt.Fprintf(&b, "\t%s) echo %s ;;\n", c[0], shQuote(c[1]))
	}
	b.WriteString("\t*) return 1 ;;\n\tesac\n}\n")
	fmt.Fprintf(&b, "\n%s_value_flags=%s\n", fn, shQuote(" "+strings.Join(root.ValueFlags(), " ")+" "))
	fmt.Fprintf(&b, bashMain, fn, app)
	return b.String()
}

// bashMain reads the words before the cursor as cliargs does (flags
// anywhere, a flag's value in the next word, "--" ending the flags, a
// subcommand only before the first argument) and completes the current
// word: a flag's listed values, flags, subcommands, or files (-o default).
// bash splits "--format=jsonl" into three words at the "=".
const bashMain = `
%[1]s() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmdpath="" w i skip=0 ddash=0 nargs=0 flag="" choices subs
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then
			[[ $w == = ]] || skip=0
		elif ((ddash)); then
			nargs=$((nargs + 1))
		elif [[ $w == -- ]]; then
			ddash=1
		elif [[ $w == -?* ]]; then
			if [[ $%[1]s_value_flags == *" $w "* ]]; then
				skip=1 flag=$w
			fi
		elif ((nargs == 0)) && [[ " $(%[1]s_subcommands "$cmdpath") " == *" $w "* ]]; then
			cmdpath=${cmdpath:+$cmdpath }$w
		else
			nargs=$((nargs + 1))
		fi
	done
	COMPREPLY=()
	if ((skip)); then
		if choices=$(%[1]s_choices "$flag"); then
			if [[ $cur == = ]]; then
				COMPREPLY=($(compgen -P = -W "$choices" --))
			else
				COMPREPLY=($(compgen -W "$choices" -- "$cur"))
			fi
		fi
		return 0
	fi
	if ((!ddash)) && [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(%[1]s_flags "$cmdpath")" -- "$cur"))
		return 0
	fi
	if ((nargs == 0)); then
		subs=$(%[1]s_subcommands "$cmdpath")
		if [[ -n $subs ]]; then
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
		fi
	fi
	return 0
}

complete -o default -F %[1]s %[2]s
`

// mergeFlags returns own followed by the global spellings not in own.
func mergeFlags(own, global []string) []string {
	out := append([]string(nil), own...)
	for _, g := range global {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// Zsh returns the zsh completion script for the app named app.
func Zsh(app string, root *Command) string {
	var b strings.Builder
	fn := "_" + identifier(app)
	fmt.Fprintf(&b, "#compdef %s\n", app)
	b.WriteString(header(app, "zsh", fmt.Sprintf(`#   source <(%[1]s completion zsh)         # in this shell, after compinit
#   %[1]s completion zsh > "${fpath[1]}/_%[1]s"`, app)))
	fmt.Fprintf(&b, "\ncompdef %s %s\n", fn, app)
	fmt.Fprintf(&b, "\n%s_subcommands() {\n\tcase $1 in\n", fn)
	ctxs := contexts(root)
	for _, c := range ctxs {
		if len(c.subs) == 0 {
			continue
		}
		var items []string
		for _, s := range c.subs {
			items = append(items, shQuote(describeEscape(s.name)+":"+s.desc))
		}
		fmt.Fprintf(&b, "\t%s) reply=(\n\t\t%s\n\t) ;;\n", shQuote(c.path), strings.Join(items, "\n\t\t"))
	}
	b.WriteString("\t*) reply=() ;;\n\tesac\n}\n")
	fmt.Fprintf(&b, "\n%s_flags() {\n\treply=()\n\tcase $1 in\n", fn)
	for _, c := range ctxs {
		if c.path == "" || len(c.flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\t%s) reply=(\n\t\t%s\n\t) ;;\n", shQuote(c.path), strings.Join(zshFlagItems(c.flags), "\n\t\t"))
	}
	b.WriteString("\tesac\n")
	fmt.Fprintf(&b, "\treply+=(\n\t\t%s\n\t)\n}\n", strings.Join(zshFlagItems(root.Flags), "\n\t\t"))
	fmt.Fprintf(&b, "\n%s_choices() {\n\tcase $1 in\n", fn)
	for _, c := range choiceCases(root) {
		fmt.Fprintf(&b, "\t%s) reply=(%s) ;;\n", c[0], c[1])
	}
	b.WriteString("\t*) return 1 ;;\n\tesac\n}\n")
	fmt.Fprintf(&b, "\n%s_value_flags=(%s)\n", fn, strings.Join(root.ValueFlags(), " "))
	fmt.Fprintf(&b, zshMain, fn)
	return b.String()
}

func zshFlagItems(fs []Flag) []string {
	var out []string
	for _, f := range fs {
		for _, n := range f.Names {
			out = append(out, shQuote(describeEscape(Spelled(n))+":"+f.Usage))
		}
	}
	return out
}

// zshMain is bashMain for zsh's completion system; "path" is zsh's PATH
// array, hence cmdpath. The last lines run the function when zsh loads
// the file from fpath, and not when it is sourced.
const zshMain = `
%[1]s() {
	local cmdpath="" w cur=${words[CURRENT]} flag=""
	local -i i skip=0 ddash=0 nargs=0
	local -a reply
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		if ((skip)); then
			skip=0
		elif ((ddash)); then
			nargs+=1
		elif [[ $w == -- ]]; then
			ddash=1
		elif [[ $w == -?* ]]; then
			if [[ $w != *=* ]] && ((${%[1]s_value_flags[(Ie)$w]})); then
				skip=1
				flag=$w
			fi
		else
			%[1]s_subcommands "$cmdpath"
			if ((nargs == 0)) && ((${reply[(I)${(b)w}:*]})); then
				cmdpath=${cmdpath:+$cmdpath }$w
			else
				nargs+=1
			fi
		fi
	done
	if ((skip)); then
		if %[1]s_choices "$flag"; then
			compadd -a reply
		else
			_files
		fi
		return
	fi
	if ((!ddash)) && [[ $cur == -*=* ]]; then
		if %[1]s_choices "${cur%%%%=*}"; then
			compset -P '*='
			compadd -a reply
		fi
		return
	fi
	if ((!ddash)) && [[ $cur == -* ]]; then
		%[1]s_flags "$cmdpath"
		_describe -t options option reply
		return
	fi
	if ((nargs == 0)); then
		%[1]s_subcommands "$cmdpath"
		if ((${#reply})); then
			_describe -t commands command reply
			return
		fi
	fi
	_files
}

if [[ $funcstack[1] == %[1]s ]]; then
	%[1]s "$@"
fi
`

// Fish returns the fish completion script for the app named app.
func Fish(app string, root *Command) string {
	var b strings.Builder
	fn := "__" + identifier(app)
	b.WriteString(header(app, "fish", fmt.Sprintf(`#   %[1]s completion fish | source         # in this shell
#   %[1]s completion fish > ~/.config/fish/completions/%[1]s.fish`, app)))
	fmt.Fprintf(&b, "\nfunction %s_subcommands\n\tswitch \"$argv[1]\"\n", fn)
	ctxs := contexts(root)
	for _, c := range ctxs {
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "\t\tcase %s\n\t\t\tprintf '%%s\\n' %s\n", fishQuote(c.path), subWords(c.subs))
		}
	}
	b.WriteString("\tend\nend\n")
	fmt.Fprintf(&b, "\nset -g %s_value_flags %s\n", fn, strings.Join(root.ValueFlags(), " "))
	fmt.Fprintf(&b, fishMain, fn, app)
	b.WriteString("\n# Commands and subcommands, where one is expected.\n")
	for _, c := range ctxs {
		for _, s := range c.subs {
			fmt.Fprintf(&b, "complete -c %s -n %s -f -a %s -d %s\n", app,
				fishQuote(fn+"_expects "+fishQuote(c.path)), fishQuote(s.name), fishQuote(s.desc))
		}
	}
	b.WriteString("\n# Global flags, anywhere on the line.\n")
	for _, f := range root.Flags {
		b.WriteString(fishFlag(app, "", f))
	}
	for _, c := range ctxs {
		if c.path == "" || len(c.flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n# %s %s\n", app, c.path)
		for _, f := range c.flags {
			if f.Names[0] == "help" {
				continue // a global flag too
			}
			b.WriteString(fishFlag(app, fishQuote(fn+"_at "+fishQuote(c.path)), f))
		}
	}
	return b.String()
}

// fishMain defines the functions the completions' conditions call:
// _parse reads the tokens before the cursor as bashMain does; _at tells
// whether the command path is the one given, _expects whether a
// subcommand may follow there.
const fishMain = `
function %[1]s_parse
	set -g %[1]s_cmdpath
	set -g %[1]s_nargs 0
	set -l skip 0
	set -l ddash 0
	for w in (commandline -opc)[2..-1]
		if test $skip = 1
			set skip 0
		else if test $ddash = 1
			set %[1]s_nargs (math $%[1]s_nargs + 1)
		else if test "$w" = --
			set ddash 1
		else if string match -q -- '-?*' $w
			if not string match -q -- '*=*' $w; and contains -- $w $%[1]s_value_flags
				set skip 1
			end
		else if test $%[1]s_nargs = 0; and contains -- $w (%[1]s_subcommands "$%[1]s_cmdpath")
			set -a %[1]s_cmdpath $w
		else
			set %[1]s_nargs (math $%[1]s_nargs + 1)
		end
	end
end

function %[1]s_at
	%[1]s_parse
	test "$%[1]s_cmdpath" = "$argv[1]"
end

function %[1]s_expects
	%[1]s_at $argv[1]; and test $%[1]s_nargs = 0
end

complete -c %[2]s -e
`

// fishFlag is the complete line of one flag, under condition (none when
// empty).
func fishFlag(app, condition string, f Flag) string {
	var b strings.Builder
	fmt.Fprintf(&b, "complete -c %s", app)
	if condition != "" {
		fmt.Fprintf(&b, " -n %s", condition)
	}
	for _, n := range f.Names {
		if len(n) == 1 {
			fmt.Fprintf(&b, " -s %s", n)
		} else {
			fmt.Fprintf(&b, " -l %s", n)
		}
	}
	switch {
	case len(f.Choices) > 0:
		fmt.Fprintf(&b, " -x -a %s", fishQuote(strings.Join(f.Choices, " ")))
	case f.Value != "":
		b.WriteString(" -r")
	}
	fmt.Fprintf(&b, " -d %s\n", fishQuote(f.Usage))
	return b.String()
}

// identifier makes a name usable in a shell function name.
func identifier(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// shQuote quotes s for bash and zsh in single quotes; a quote inside is
// closed, escaped and reopened.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// describeEscape escapes the colons of a name for zsh's _describe.
func describeEscape(s string) string { return strings.ReplaceAll(s, ":", `\:`) }
