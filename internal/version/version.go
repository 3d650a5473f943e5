package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Build is what a binary knows about its own build.
type Build struct {
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

// Read describes the running binary from the build
// information that the go command records in it.
func Read() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Version: "(unknown)", Go: runtime.Version()}
	}
	return Of(bi)
}

// Of reads a build's module version, VCS settings and Go version.
func Of(bi *debug.BuildInfo) Build {
	v := Build{Version: bi.Main.Version, Go: bi.GoVersion}
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
// version on the first line, then the commit (and its date, when known)
// and the Go version with the platform.
func (v Build) String() string {
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
