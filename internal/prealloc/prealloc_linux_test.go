//go:build linux

package prealloc

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// allocated returns the bytes of disk the file uses.
func allocated(t *testing.T, f *os.File) int64 {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Blocks * 512
}

func TestEnsureReservesWithoutChangingTheFileAndReleaseGivesItBack(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := New(f)
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	var size int64
	for range 8 {
		a.Ensure(size + int64(len(data)))
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		size += int64(len(data))
	}
	if a.off {
		t.Skip("the file system cannot reserve space")
	}
	fi, _ := f.Stat()
	if fi.Size() != size {
		t.Fatalf("size %d after writing %d bytes", fi.Size(), size)
	}
	if got := allocated(t, f); got < size+step(size)/2 || !a.Reserved() {
		t.Fatalf("%d bytes allocated for %d written: nothing reserved", got, size)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if got := allocated(t, f); got > size+64<<10 || a.Reserved() {
		t.Fatalf("%d bytes allocated for %d after Release", got, size)
	}
	back, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(back, bytes.Repeat(data, 8)) {
		t.Fatalf("contents changed (%d bytes, %v)", len(back), err)
	}
}

// TestReservationIsInProportionToTheFile: a small file reserves MinStep,
// not Step; a file past Step reserves Step at a time.
func TestReservationIsInProportionToTheFile(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{0, MinStep}, {100 << 10, MinStep}, {3 << 20, 3 << 20}, {Step, Step}, {10 * Step, Step},
	} {
		if got := step(tc.size); got != tc.want {
			t.Errorf("step(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "small"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := New(f)
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	a.Ensure(4096)
	if a.off {
		t.Skip("the file system cannot reserve space")
	}
	if got := allocated(t, f); got > 4096+MinStep+64<<10 {
		t.Fatalf("%d bytes allocated for a 4 KiB file", got)
	}
}
