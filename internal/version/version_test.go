package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestTheVersionOfABuildNamesItsCommitAndGo(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"checkout with changes", debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel)\ncommit: 0123456789abcdef0123456789abcdef01234567 (with uncommitted changes)\ndate:   2026-01-02T03:04:05Z\ngo:     go1.26.1" + platform},
		{"go install of a release", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}},
			"v1.2.0\ncommit: unknown (built without version control information)\ngo:     go1.26.0" + platform},
		{"go install of a commit", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab"}},
			"v0.0.0-20260102030405-0123456789ab\ncommit: 0123456789ab\ngo:     go1.26.0" + platform},
		{"no module version", debug.BuildInfo{GoVersion: "go1.26.0"},
			"(devel)\ncommit: unknown (built without version control information)\ngo:     go1.26.0" + platform},
	}
	for _, c := range cases {
		if got := Of(&c.bi).String(); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	if v := Read(); !strings.HasPrefix(v.Go, "go") {
		t.Errorf("this test binary's version: %+v", v)
	}
}
