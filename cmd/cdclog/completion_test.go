package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/cligen"
)

// treeWords returns every command name, subcommand name and flag spelling
// of cdclog's visible tree.
func treeWords(t *testing.T) []string {
	t.Helper()
	var words []string
	cligen.Tree(newApp(nil, io.Discard, io.Discard)).Walk(func(c *cligen.Command) {
		if len(c.Path) > 0 {
			words = append(words, c.Path[len(c.Path)-1])
		}
		for _, f := range c.Flags {
			for _, n := range f.Names {
				words = append(words, cligen.Spelled(n))
			}
		}
	})
	for _, w := range []string{"ingest", "inspect", "status", "quarantine", "--db", "--on-error", "completion", "-q"} {
		if !slices.Contains(words, w) {
			t.Fatalf("the tree has no %s: %v", w, words)
		}
	}
	return words
}

// completionScript writes 'cdclog completion SHELL' (from the built
// binary) to a file and returns its path.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	r := mustRunBin(t, nil, "completion", shell)
	return writeFile(t, t.TempDir(), "cdclog."+shell, r.Stdout)
}

// TestCompletionScriptsMentionEveryCommand: the scripts come from the
// command definitions, so each knows every command, view and flag.
func TestCompletionScriptsMentionEveryCommand(t *testing.T) {
	words := treeWords(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := mustRunBin(t, nil, "completion", shell).Stdout
		for _, w := range words {
			if shell == "fish" { // complete -l db, -s q
				if long, ok := strings.CutPrefix(w, "--"); ok {
					w = "-l " + long
				} else if short, ok := strings.CutPrefix(w, "-"); ok {
					w = "-s " + short
				}
			}
			if !strings.Contains(script, w) {
				t.Errorf("the %s script does not mention %s", shell, w)
			}
		}
	}
	expectFailure(t, exitUsage, nil, []string{"completion", "tcsh"}, `unknown shell "tcsh"`)
	expectFailure(t, exitUsage, nil, []string{"completion"}, "bash, zsh or fish")
}

// completionCases are command lines (the cursor at the end; a trailing
// space starts a new word) and words the completion must offer, or must
// not ("!word").
var completionCases = []struct {
	line string
	want []string
}{
	{"cdclog ", []string{"gen", "ingest", "inspect", "completion", "help", "!--db"}},
	{"cdclog ins", []string{"inspect", "!ingest"}},
	{"cdclog inspect ", []string{"status", "pending", "wal", "output", "quarantine"}},
	{"cdclog inspect --db x.db st", []string{"status"}},
	{"cdclog inspect status --", []string{"--json", "--db", "--lock-timeout", "--format", "!--limit"}},
	{"cdclog ingest in.jsonl --o", []string{"--out", "--on-error", "--out-format", "!--db"}},
	{"cdclog ingest --on-error ", []string{"fail", "skip", "quarantine"}},
	{"cdclog gen --format ", []string{"jsonl", "msgpack"}},
	{"cdclog help ", []string{"ingest", "inspect", "!help"}},
	{"cdclog help inspect ", []string{"status", "wal"}},
	{"cdclog completion ", []string{"bash", "zsh", "fish"}},
	{"cdclog merge a.jsonl ", []string{"!gen", "!status"}},
	{"cdclog -q ingest --db s.db ", []string{"!ingest", "!status"}},
}

// bashComplete runs the bash script's completion function on line.
func bashComplete(t *testing.T, script, line string) []string {
	t.Helper()
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	args := append([]string{"-c", `source "$1" && shift && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && _cdclog && printf '%s\n' "${COMPREPLY[@]}"`, "bash", script}, words...)
	out, err := exec.Command("bash", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", line, err, out)
	}
	return strings.Fields(string(out))
}

func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := completionScript(t, "bash")
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	for _, c := range completionCases {
		checkCompletion(t, "bash", c.line, bashComplete(t, script, c.line), c.want)
	}
	// bash splits "--format=jsonl" into three words at the "=".
	checkCompletion(t, "bash", "cdclog --format=", bashComplete(t, script, "cdclog --format ="), []string{"=jsonl", "=msgpack"})
	checkCompletion(t, "bash", "cdclog --format=j", bashComplete(t, script, "cdclog --format = j"), []string{"jsonl", "!msgpack"})
	checkCompletion(t, "bash", "cdclog --format=jsonl ", bashComplete(t, script, "cdclog --format = jsonl "), []string{"gen", "!jsonl"})
}

// TestZshCompletion runs the zsh script's function with the completion
// system's builtins replaced by functions that print what they are given
// (so the output is unfiltered by the current word).
func TestZshCompletion(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed")
	}
	script := completionScript(t, "zsh")
	if out, err := exec.Command("zsh", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	driver := writeFile(t, filepath.Dir(script), "driver.zsh", `compdef() { : }
_describe() { print -l -- "${(@P)4}" }
compadd() { print -l -- "${(@P)2}" }
_files() { print FILES }
compset() { : }
source $1
shift
words=("$@")
CURRENT=$#
_cdclog
`)
	for _, c := range completionCases {
		words := strings.Fields(c.line)
		if strings.HasSuffix(c.line, " ") {
			words = append(words, "")
		}
		out, err := exec.Command("zsh", append([]string{"-f", driver, script}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, out)
		}
		var got []string
		cur := words[len(words)-1]
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, _, _ := strings.Cut(l, ":")
			if strings.HasPrefix(name, cur) {
				got = append(got, name)
			}
		}
		checkCompletion(t, "zsh", c.line, got, c.want)
	}
}

// TestFishCompletion asks fish itself (complete -C) what it completes.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish is not installed")
	}
	script := completionScript(t, "fish")
	if out, err := exec.Command("fish", "--no-execute", script).CombinedOutput(); err != nil {
		t.Fatalf("fish --no-execute: %v\n%s", err, out)
	}
	for _, c := range completionCases {
		out, err := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, script, c.line).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.line, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, _, _ := strings.Cut(l, "\t")
			got = append(got, name)
		}
		checkCompletion(t, "fish", c.line, got, c.want)
	}
}

func checkCompletion(t *testing.T, shell, line string, got, want []string) {
	t.Helper()
	for _, w := range want {
		if no, ok := strings.CutPrefix(w, "!"); ok {
			if slices.Contains(got, no) {
				t.Errorf("%s %q offers %s: %v", shell, line, no, got)
			}
		} else if !slices.Contains(got, w) {
			t.Errorf("%s %q does not offer %s: %v", shell, line, w, got)
		}
	}
}
