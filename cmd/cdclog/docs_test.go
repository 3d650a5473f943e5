package main

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/cligen"
)

// regenerateDocs is the one command that rewrites the generated docs.
const regenerateDocs = "CDCLOG_UPDATE_DOCS=1 go test ./cmd/cdclog -run TestGeneratedDocsAreUpToDate"

// Where the generated docs live, from the repository root.
const (
	cliDocsDir = "docs/cli"
	manPage    = "docs/man/cdclog.1"
)

// generatedDocs returns every generated file by its path from the
// repository root: a Markdown page per command under docs/cli and the man
// page.
func generatedDocs() map[string]string {
	tree := cligen.Tree(newApp(nil, io.Discard, io.Discard))
	files := map[string]string{manPage: cligen.Man("cdclog", regenerateDocs, tree)}
	for name, page := range cligen.Markdown("cdclog", regenerateDocs, tree) {
		files[filepath.Join(cliDocsDir, name)] = page
	}
	return files
}

// TestGeneratedDocsAreUpToDate regenerates docs/cli/*.md and
// docs/man/cdclog.1 from the command definitions in memory and compares
// them with the checked-in files, so a command or flag that changes
// without its docs fails here. With CDCLOG_UPDATE_DOCS=1 it rewrites them
// (and removes pages of commands that are gone).
func TestGeneratedDocsAreUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	files := generatedDocs()
	update := os.Getenv("CDCLOG_UPDATE_DOCS") != ""
	existing, _ := filepath.Glob(filepath.Join(root, cliDocsDir, "*.md"))
	for _, path := range existing {
		rel, _ := filepath.Rel(root, path)
		if _, ok := files[rel]; ok {
			continue
		}
		if update {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not generated from any command (run %s)", rel, regenerateDocs)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, rel := range paths {
		path := filepath.Join(root, rel)
		if update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(files[rel]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run %s)", rel, err, regenerateDocs)
			continue
		}
		if string(got) != files[rel] {
			t.Errorf("%s is out of date with the command definitions: run\n\t%s\n%s", rel, regenerateDocs, firstLineDiff(string(got), files[rel]))
		}
	}
}

// firstLineDiff describes the first line where two texts differ.
func firstLineDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var a, b string
		if i < len(h) {
			a = h[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "first difference at line " + u64(uint64(i+1)) + ":\n\tchecked in: " + a + "\n\tgenerated:  " + b
		}
	}
	return ""
}

// TestGeneratedDocsCoverEveryCommand: a page per top-level command, and
// every command, view and flag named in its page and in the man page.
func TestGeneratedDocsCoverEveryCommand(t *testing.T) {
	files := generatedDocs()
	tree := cligen.Tree(newApp(nil, io.Discard, io.Discard))
	for _, c := range tree.Subcommands {
		page, ok := files[filepath.Join(cliDocsDir, cligen.MarkdownFile("cdclog", c))]
		if !ok {
			t.Errorf("no page for %s", c.Name("cdclog"))
			continue
		}
		c.Walk(func(n *cligen.Command) {
			if !strings.Contains(page, "# "+n.Name("cdclog")+"\n") {
				t.Errorf("%s's page has no section for %s", c.Name("cdclog"), n.Name("cdclog"))
			}
			if !strings.Contains(files[manPage], ".SS "+strings.ReplaceAll(n.Name("cdclog"), "-", `\-`)+"\n") {
				t.Errorf("the man page has no section for %s", n.Name("cdclog"))
			}
			for _, f := range n.Flags {
				if !strings.Contains(page, "`"+cligen.Spelled(f.Names[0])) {
					t.Errorf("%s's page does not document %s", n.Name("cdclog"), cligen.Spelled(f.Names[0]))
				}
			}
		})
	}
}
