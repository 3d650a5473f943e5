package main

import (
	"embed"
	"strings"
)

// helpFiles holds the long help of every command, help/NAME.txt: NAME is
// the command's path below cdclog joined with "-" (inspect-status), and
// cdclog.txt is the help of cdclog itself. The files are plain text that
// ends in a newline, which is not part of the help.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText returns the text of help/NAME.txt for a command's Description.
// The files are compiled into the binary, so a missing one is a mistake in
// the source, not in any input: it panics while the command tree is built,
// which every test of this package does (TestHelpFiles checks them all).
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("cdclog: no help text for " + name + ": " + err.Error())
	}
	return strings.TrimSuffix(string(b), "\n")
}
