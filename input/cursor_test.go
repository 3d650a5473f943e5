package input

import (
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func TestCRCRangeHashesTheRangeAsOneSlice(t *testing.T) {
	data := make([]byte, 3*tailSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, r := range [][2]int64{{0, 0}, {0, 10}, {5, tailSize}, {0, int64(len(data))}, {tailSize - 1, 2*tailSize + 3}} {
		got, err := crcRange(f, r[0], r[1])
		if want := crc32.Checksum(data[r[0]:r[0]+r[1]], table); err != nil || got != want {
			t.Fatalf("crcRange(%d, %d) = %08x, %v; want %08x", r[0], r[1], got, err, want)
		}
	}
	// Past the end: what the file holds.
	if got, err := crcRange(f, 10, int64(len(data))); err != nil || got != crc32.Checksum(data[10:], table) {
		t.Fatalf("crcRange past the end = %08x, %v", got, err)
	}
}
