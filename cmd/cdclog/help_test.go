package main

import (
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpFiles: every file under help/ is the help of the command it is
// named for, non-empty and ending in one newline, and no file is left
// over from a command that is gone or renamed.
func TestHelpFiles(t *testing.T) {
	app := newApp(nil, io.Discard, io.Discard)
	descriptions := map[string]string{"cdclog": app.Description}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			descriptions[prefix+c.Name] = c.Description
			walk(prefix+c.Name+"-", c.Subcommands)
		}
	}
	walk("", app.Commands)
	names, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(names) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "help/"), ".txt")
		b, _ := fs.ReadFile(helpFiles, file)
		text := string(b)
		switch {
		case strings.TrimSpace(text) == "":
			t.Errorf("%s is empty", file)
		case !strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\n\n") || strings.Contains(text, "\r"):
			t.Errorf("%s must end in exactly one newline and hold no carriage return", file)
		}
		desc, ok := descriptions[name]
		if !ok {
			t.Errorf("%s names no command", file)
			continue
		}
		if desc != strings.TrimSuffix(text, "\n") {
			t.Errorf("the command %s does not show %s as its help", name, file)
		}
	}
	if !strings.Contains(helpText("serve"), "(default "+defaultListen+")") {
		t.Errorf("help/serve.txt does not name serve's default address %s", defaultListen)
	}
}
