package recovery

import (
	"fmt"
	"hash/crc32"
	"io"
)

// sinkTailSize is how many bytes before the output file's committed size
// the checkpoint's CRC covers: enough to span many records, so that a file
// another program wrote is told apart, and little enough that keeping it
// costs nothing per commit and checking it is one small read at Open.
const sinkTailSize = 4 << 10

var sinkCRCTable = crc32.MakeTable(crc32.Castagnoli)

// tailWindow holds the last sinkTailSize bytes written to the output
// file, whose CRC each commit records.
type tailWindow struct {
	b []byte
}

// push records that p was written after the window's bytes.
func (t *tailWindow) push(p []byte) {
	if len(p) >= sinkTailSize {
		t.b = append(t.b[:0], p[len(p)-sinkTailSize:]...)
		return
	}
	if drop := len(t.b) + len(p) - sinkTailSize; drop > 0 {
		t.b = t.b[:copy(t.b, t.b[drop:])]
	}
	t.b = append(t.b, p...)
}

// stamp sets the state's tail fields from the window.
func (t *tailWindow) stamp(cs *sinkState) {
	cs.TailLen = int64(len(t.b))
	cs.TailCRC = crc32.Checksum(t.b, sinkCRCTable)
}

// load fills the window with the file's bytes before size.
func (t *tailWindow) load(r io.ReaderAt, size int64) error {
	n := min(size, sinkTailSize)
	t.b = append(t.b[:0], make([]byte, n)...)
	if n == 0 {
		return nil
	}
	if _, err := r.ReadAt(t.b, size-n); err != nil {
		return fmt.Errorf("read the output file's last %d committed bytes: %w", n, err)
	}
	return nil
}
