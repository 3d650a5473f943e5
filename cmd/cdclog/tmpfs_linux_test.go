package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs with options opts (such as "size=8m" or "ro")
// on a new directory and unmounts it when the test ends. Only root can;
// otherwise, or where mounting is not allowed (a container without
// CAP_SYS_ADMIN), the test is skipped, saying why.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (a filesystem that fills up or is read-only); run the tests as root to cover this")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	if strings.Contains(","+opts+",", ",ro,") {
		flags |= syscall.MS_RDONLY
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, opts); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): running without CAP_SYS_ADMIN?", err)
	}
	t.Cleanup(func() {
		for i := 0; ; i++ {
			err := syscall.Unmount(dir, 0)
			if err == nil {
				return
			}
			if i == 50 {
				syscall.Unmount(dir, syscall.MNT_DETACH)
				t.Errorf("unmount %s: %v (detached)", dir, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// growTmpfs remounts the tmpfs at dir with a larger size.
func growTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size="+size); err != nil {
		t.Fatalf("grow the tmpfs: %v", err)
	}
}
