package input

import (
	"encoding/json"
	"hash/crc32"
	"io"
	"os"
)

// headSize is how much of a file's beginning identifies it, and tailSize
// how much of what precedes the committed offset is checked on resume.
const (
	headSize = 64 << 10
	tailSize = 4 << 10
)

// fileCursor is what is committed about a regular file with each batch:
// how far it got, and fingerprints of the file, so that a rerun on the
// same file resumes there and a rerun on another file with the same name
// starts over. Its JSON form is the stored cursor (kept as it was when
// cmd/cdclog wrote it, so that databases resume across the move).
type fileCursor struct {
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
	// HeadCRC hashes the file's first HeadLen bytes: up to headSize, and
	// never past the offset, so that the bytes hashed are ones already
	// read (a file still being appended to keeps them as they are).
	HeadLen int64  `json:"head_len"`
	HeadCRC uint32 `json:"head_crc"`
	// TailCRC hashes the tailSize bytes before Offset (fewer near the
	// start): the part of the file a resume relies on most.
	TailCRC uint32 `json:"tail_crc"`
}

func (c *fileCursor) marshal() []byte {
	b, _ := json.Marshal(c) // plain integers: cannot fail
	return b
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcRange hashes (CRC-32C) the n bytes of f from start, or as many as the
// file holds. It is called for every batch, so it reads into a buffer on
// the stack: io.Copy allocated 32 KiB each time.
func crcRange(f *os.File, start, n int64) (uint32, error) {
	var buf [tailSize]byte
	var sum uint32
	for n > 0 {
		k, err := f.ReadAt(buf[:min(n, int64(len(buf)))], start)
		sum = crc32.Update(sum, castagnoli, buf[:k])
		start, n = start+int64(k), n-int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// tailCRC hashes the bytes of f just before offset.
func tailCRC(f *os.File, offset int64) (uint32, error) {
	start := max(0, offset-tailSize)
	return crcRange(f, start, offset-start)
}

// matches reports whether f still holds what c describes: its head and
// the bytes before its offset, within a file at least that long.
func (c *fileCursor) matches(f *os.File, size int64) bool {
	if c.HeadLen > size || c.Offset > size || c.Offset < 0 || c.HeadLen < 0 {
		return false
	}
	head, err := crcRange(f, 0, c.HeadLen)
	if err != nil || head != c.HeadCRC {
		return false
	}
	tail, err := tailCRC(f, c.Offset)
	return err == nil && tail == c.TailCRC
}
