package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// buildVersion is what a binary knows about its own build.
type buildVersion struct {
	// Version is the module version: a release ("v1.2.0") or pseudo-version
	// for `go install ...@version`, "(devel)" for a build in a checkout.
	Version string
	// Commit is the VCS revision, "" when unknown; Modified is set when
	// the checkout had uncommitted changes; Time is the commit's time.
	Commit   string
	Modified bool
	Time     string
	// Go is the toolchain that built the binary.
	Go string
}

// pseudoVersionRev matches the revision at the end of a Go
// pseudo-version (v0.0.0-20260101120000-0123456789ab), which is all a
// `go install module@commit` build knows of its commit.
var pseudoVersionRev = regexp.MustCompile(`-\d{14}-([0-9a-f]{12})(\+incompatible)?$`)

// readBuildVersion describes the running binary from the build
// information that the go command records in it.
func readBuildVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{Version: "(unknown)", Go: runtime.Version()}
	}
	return versionOf(bi)
}

// versionOf reads a build's module version, VCS settings and Go version.
func versionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Time = s.Value
		}
	}
	if v.Commit == "" {
		if m := pseudoVersionRev.FindStringSubmatch(v.Version); m != nil {
			v.Commit = m[1]
		}
	}
	return v
}

// String is the text of 'cdclog --version' after "cdclog version ": the
// version on the first line, then the commit and the Go version.
func (v buildVersion) String() string {
	var b strings.Builder
	b.WriteString(v.Version)
	commit := v.Commit
	if commit == "" {
		commit = "unknown (built without version control information)"
	}
	if v.Modified {
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(&b, "\ncommit: %s", commit)
	if v.Time != "" {
		fmt.Fprintf(&b, "\ndate:   %s", v.Time)
	}
	fmt.Fprintf(&b, "\ngo:     %s %s/%s", v.Go, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// printVersion writes what 'cdclog version' and 'cdclog --version' print.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "cdclog version %s\n", readBuildVersion())
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version, commit and Go version of this binary",
		UsageText: "cdclog version",
		Description: `Prints what the binary knows of its build: the module version (a release or
pseudo-version for 'go install github.com/cdclog/cdclog/cmd/cdclog@VERSION',
"(devel)" for a build in a checkout), the commit it was built from and whether
the checkout had uncommitted changes, and the Go version. 'cdclog --version'
prints the same.

Examples:
   cdclog version
   cdclog --version`,
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("version"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("version takes no arguments, got %q", c.Args().First())
			}
			printVersion(c.App.Writer)
			return nil
		},
	}
}
