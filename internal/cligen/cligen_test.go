package cligen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestTreeReadsVisibleFlagsValuesAndChoices(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "wire `FORMAT`: jsonl or msgpack"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "say less"},
			&cli.StringFlag{Name: "secret", Hidden: true},
		},
		Commands: []*cli.Command{{Name: "ingest", Flags: []cli.Flag{
			&cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY`: fail, skip or quarantine"},
		}, Subcommands: []*cli.Command{{Name: "hidden", Hidden: true}}}},
	}
	root := Tree(app)
	want := []Flag{
		{Names: []string{"format"}, Value: "FORMAT", Usage: "wire FORMAT: jsonl or msgpack", Default: `"jsonl"`, Choices: []string{"jsonl", "msgpack"}},
		{Names: []string{"quiet", "q"}, Usage: "say less"},
		{Names: []string{"help", "h"}, Usage: "show help"},
	}
	if !reflect.DeepEqual(root.Flags, want) {
		t.Errorf("app flags:\n%+v\nwant\n%+v", root.Flags, want)
	}
	ingest := root.Subcommands[0]
	if len(ingest.Subcommands) != 0 || ingest.Flags[0].Choices == nil || strings.Join(ingest.Flags[0].Choices, " ") != "fail skip quarantine" {
		t.Errorf("ingest: %+v", ingest)
	}
	if got := strings.Join(root.ValueFlags(), " "); got != "--format --on-error" {
		t.Errorf("value flags %q", got)
	}
}

func TestBlocksSplitProseFromIndentedRuns(t *testing.T) {
	got := blocks("First line\nsecond line:\n   cmd one\n      continued\n   cmd two\nAfter.\n\nNew paragraph.\n")
	want := []block{
		{lines: []string{"First line", "second line:"}},
		{pre: true, lines: []string{"cmd one", "   continued", "cmd two"}},
		{lines: []string{"After."}},
		{lines: []string{"New paragraph."}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v", got)
	}
}

func TestEscaping(t *testing.T) {
	for in, want := range map[string]string{
		`--db 'x' \ ∞`: `\-\-db 'x' \e \[u221E]`,
	} {
		if got := roff(in); got != want {
			t.Errorf("roff(%q) = %q, want %q", in, got, want)
		}
	}
	if got := roffLine("'quoted' start"); got != `\&'quoted' start` {
		t.Errorf("roffLine: %q", got)
	}
	if got := mdEscape("# a_b *c* [d] <e>"); got != `\# a\_b \*c\* \[d\] &lt;e&gt;` {
		t.Errorf("mdEscape: %q", got)
	}
	if got := shQuote("it's"); got != `'it'\''s'` {
		t.Errorf("shQuote: %q", got)
	}
	if got := fishQuote(`it's \`); got != `'it\'s \\'` {
		t.Errorf("fishQuote: %q", got)
	}
}
