package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
)

// ingestUntilItFails runs 'cdclog ingest --db db' reading the stream at
// in from a pipe: it writes the first half, waits until the database has
// grown past committed bytes, calls fault, writes the rest and keeps the
// pipe open. ingest must then exit 1 within a few seconds, with an error
// naming each of mentions, without a panic.
func ingestUntilItFails(t *testing.T, db, in string, committed int64, fault func(), mentions ...string) {
	t.Helper()
	stream := readFile(t, in)
	half := bytes.IndexByte(stream[len(stream)/2:], '\n') + len(stream)/2 + 1
	cmd, stdout, stderr := testbin.Command(t, nil, "ingest", "--db", db, "--batch-messages", "2000")
	cmd.Stdout = io.Discard
	feed, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	go func() {
		feed.Write(stream[:half])
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(db); err == nil && fi.Size() >= committed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database never grew past %d bytes: %s", committed, stderr)
		}
	}
	time.Sleep(200 * time.Millisecond) // the first half committed
	fault()
	faulted := time.Now()
	go func() {
		feed.Write(stream[half:]) // fails once the child has exited
	}()
	select {
	case err := <-exited:
		r := testbin.Finish(cmd, err, stdout, stderr, time.Since(start))
		if r.Code != exitFailure {
			t.Fatalf("ingest after the fault: %v", r)
		}
		for _, m := range mentions {
			if !strings.Contains(r.Stderr, m) {
				t.Errorf("stderr does not say %q:\n%s", m, r.Stderr)
			}
		}
		noPanic(t, r)
		t.Logf("exited %v after the fault: %s", time.Since(faulted).Round(time.Millisecond), lastLine(r.Stderr))
	case <-time.After(20 * time.Second):
		// Its goroutines say where it hangs.
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("ingest still running 20 s after the fault (stdin open):\n%s", stderr)
	}
}

// TestIngestExitsWhenItsDatabaseFileIsCutShort: the database file cut
// short under a running ingest (a failing disk, another program) makes
// bbolt fault reading its memory map, in the commit and again in the
// rollback, which left bbolt's writer lock held: ingest logged
// "processor stopped" and never exited. It must exit 1 promptly with the
// error, even while its input stays open.
func TestIngestExitsWhenItsDatabaseFileIsCutShort(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 11, Times: 60_000})
	db := filepath.Join(dir, "state.db")
	ingestUntilItFails(t, db, in, 2<<20, func() {
		if err := os.Truncate(db, 8192); err != nil {
			t.Fatal(err)
		}
	}, "processor stopped", "database is corrupt", "cut to 8192 bytes while open")
}

// TestIngestExitsWhenItsFileSystemFails: the database on an ext4 file
// system that shuts down mid-run (EXT4_IOC_SHUTDOWN: every read and
// write then fails with EIO, and pages no longer in memory fault in the
// memory map). ingest must exit 1 promptly with the error. It needs root
// (to attach a loop device and mount), and mkfs.ext4 and losetup; where
// those are missing it is skipped, saying why.
func TestIngestExitsWhenItsFileSystemFails(t *testing.T) {
	mnt := mountExt4(t)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 12, Times: 60_000})
	db := filepath.Join(mnt, "state.db")
	ingestUntilItFails(t, db, in, 2<<20, func() {
		f, err := os.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		shutdownFS(t, mnt)
		// Drop the file's pages from the page cache, again and again as
		// ingest releases its mapped pages, so that reading them faults.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		t.Cleanup(func() { cancel(); <-done })
		go func() {
			defer close(done)
			defer f.Close()
			for ctx.Err() == nil {
				syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, 4 /* POSIX_FADV_DONTNEED */, 0, 0)
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}, "processor stopped", "input/output error")
}

// mountExt4 makes a 256 MiB ext4 file system on a loop device and mounts
// it on a new directory, undone when the test ends; it skips the test
// where that is not possible.
func mountExt4(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount an ext4 file system on a loop device (to make it fail mid-run); run the tests as root to cover this")
	}
	for _, tool := range []string{"mkfs.ext4", "losetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s to make an ext4 file system on a loop device", tool)
		}
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "fs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4: %v: %s", err, out)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).Output()
	if err != nil {
		t.Skipf("cannot attach a loop device (%v): running without loop devices?", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	if err := syscall.Mount(dev, mnt, "ext4", 0, ""); err != nil {
		t.Skipf("cannot mount ext4 on %s (%v): running without CAP_SYS_ADMIN?", dev, err)
	}
	t.Cleanup(func() {
		for i := 0; syscall.Unmount(mnt, 0) != nil; i++ {
			if i == 50 {
				syscall.Unmount(mnt, syscall.MNT_DETACH)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return mnt
}

// shutdownFS shuts the ext4 file system at mnt down without flushing its
// journal, as a failing disk would: every later I/O fails with EIO.
func shutdownFS(t *testing.T, mnt string) {
	t.Helper()
	const ext4IocShutdown = 0x8004587D // _IOR('X', 125, __u32)
	const noLogFlush = 2               // EXT4_GOING_FLAGS_NOLOGFLUSH
	d, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	flag := uint32(noLogFlush)
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, d.Fd(), ext4IocShutdown, uintptr(unsafe.Pointer(&flag))); errno != 0 {
		t.Skipf("cannot shut the file system down: %v", errors.Unwrap(errno))
	}
}
