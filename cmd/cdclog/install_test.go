package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/testbin"
)

// TestModuleIsInstallable guards what 'go install
// github.com/cdclog/cdclog/cmd/cdclog@latest' needs from go.mod: the module
// path is the repository's and this command's import path matches it; no
// replace or exclude directive (go install refuses a module with one);
// and a go line naming a release no later than needed, X.Y or X.Y.0, so
// that no Go X.Y toolchain has to download another to build it.
func TestModuleIsInstallable(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod := string(b)
	if !strings.HasPrefix(mod, "module github.com/cdclog/cdclog\n") || !strings.HasPrefix(testbin.Package, "github.com/cdclog/cdclog/") {
		t.Errorf("the module path is not github.com/cdclog/cdclog:\n%s", mod)
	}
	if m := regexp.MustCompile(`(?m)^(replace|exclude|toolchain)\b.*$`).FindString(mod); m != "" {
		t.Errorf("go.mod has %q", m)
	}
	if !regexp.MustCompile(`(?m)^go 1\.\d+(\.0)?$`).MatchString(mod) {
		t.Errorf("go.mod's go line names a patch release; use the language version (go mod tidy keeps the X.Y.0 its dependencies require):\n%s", mod)
	}
}
