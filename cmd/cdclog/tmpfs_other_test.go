//go:build !linux

package main

import "testing"

// mountTmpfs skips: mounting a small tmpfs is Linux's (tmpfs_linux_test.go).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	t.Skip("mounting a small tmpfs needs Linux")
	return ""
}

// growTmpfs is never reached off Linux: mountTmpfs skipped first.
func growTmpfs(t *testing.T, dir, size string) { t.Helper(); t.Fatal("growTmpfs needs Linux") }
