// Package proctest reads the test process's own memory figures from
// /proc, for tests that check what a package keeps resident (mapped
// database pages, say). It is test support: no production code imports it.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// RssFileKiB returns the process's resident file-backed memory in KiB
// (RssFile in /proc/self/status). It skips the test where the kernel does
// not report it, and fails it on a figure it cannot read.
func RssFileKiB(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	n, ok, err := statusField(b, "RssFile:")
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("no RssFile in /proc/self/status")
	}
	return n
}

// statusField returns the number after name in a /proc status file's
// text, and whether the field is there.
func statusField(status []byte, name string) (int, bool, error) {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		v, ok := bytes.CutPrefix(line, []byte(name))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) == 0 {
			return 0, true, strconv.ErrSyntax
		}
		n, err := strconv.Atoi(string(f[0]))
		return n, true, err
	}
	return 0, false, nil
}
