package ordering

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/cdclog/cdclog/cdc"
)

// MaxLineSize is the longest record a JSONLReader accepts: 16 MiB, not
// counting the line terminator (cdc.MaxMessageSize, the limit of every
// other cdclog reader).
const MaxLineSize = cdc.MaxMessageSize

// tooLongPrefix is how much of an over-long line a LineError keeps in Raw:
// the first KiB, as in every cdc.Reject of a message too long to hold.
const tooLongPrefix = cdc.RejectHead

// readBufferSize is the bufio buffer; longer lines are assembled apart.
const readBufferSize = 64 << 10

var bom = []byte("\xEF\xBB\xBF")

// bomRoom returns how many bytes line number line, which starts with
// start, may have beyond MaxLineSize: the byte order mark's, on the first
// line, which is not part of the record (as in every cdclog reader).
func bomRoom(line int64, start []byte) int {
	if line == 1 && bytes.HasPrefix(start, bom) {
		return len(bom)
	}
	return 0
}

// A JSONLReader reads one shard's records from JSON Lines: one JSON object
// per line, keyed as RecordKey says. It is a Source for Merge.
//
// Lines end in LF or CRLF; the last may lack its terminator. A UTF-8 byte
// order mark before the first line is dropped. Blank lines (only spaces,
// tabs or CR) are skipped, but counted in line numbers. A record is
// returned as its line's bytes exactly, less the terminator (and the byte
// order mark); lines up to MaxLineSize bytes are accepted. The zero
// JSONLReader reads nothing.
type JSONLReader struct {
	r    *bufio.Reader
	name string
	line int64  // number of the line last read
	off  int64  // byte offset of the line last read
	next int64  // byte offset of the next line: what was consumed
	long []byte // assembles lines longer than r's buffer
	err  error  // sticky read error
	// slowKeys makes Next find keys by the slow path only, as it did
	// before the fast one: for the reference merge in the tests.
	slowKeys bool
}

// NewJSONLReader reads records from r; name (a file name) is used in errors.
func NewJSONLReader(r io.Reader, name string) *JSONLReader {
	return &JSONLReader{r: bufio.NewReaderSize(r, readBufferSize), name: name}
}

// Next returns the next record and its key. The record's bytes are valid
// until the next call to Next. At the end of input it returns io.EOF.
//
// A line that is not a usable record gives a *LineError naming the source
// and line, and Next can be called again to go on with the following line.
// Any other error (a failed read, a *ReadError) is final and returned by
// every later call.
func (j *JSONLReader) Next() (Key, []byte, error) {
	for {
		line, tooLong, err := j.readLine()
		if err != nil {
			return Key{}, nil, err
		}
		if j.line == 1 && bytes.HasPrefix(line, bom) {
			line, j.off = line[len(bom):], j.off+int64(len(bom))
		}
		if tooLong {
			return Key{}, nil, &LineError{Source: j.name, Line: j.line, Offset: j.off, Raw: line, Err: lineTooLong(j.line)}
		}
		if len(bytes.Trim(line, " \t\r")) == 0 {
			continue
		}
		key, err := j.recordKey(line)
		if err != nil {
			return Key{}, nil, &LineError{Source: j.name, Line: j.line, Offset: j.off, Raw: line, Err: err}
		}
		return key, line, nil
	}
}

func (j *JSONLReader) recordKey(line []byte) (Key, error) {
	if j.slowKeys {
		return recordKeySlow(line)
	}
	return RecordKey(line)
}

// Line returns the number of the line last read: that of the record or
// LineError Next returned last.
func (j *JSONLReader) Line() int64 { return j.line }

// Offset returns the byte offset in the input of the first byte of the
// line last read (after the byte order mark, on the first line), as a
// cdc.Pos gives it.
func (j *JSONLReader) Offset() int64 { return j.off }

// readLine returns the next line without its terminator. For a line longer
// than MaxLineSize it consumes the whole line, returns its first bytes and
// sets tooLong.
func (j *JSONLReader) readLine() (line []byte, tooLong bool, err error) {
	if j.err != nil {
		return nil, false, j.err
	}
	if j.r == nil {
		return nil, false, io.EOF
	}
	line, err = j.r.ReadSlice('\n')
	n := int64(len(line))
	if errors.Is(err, bufio.ErrBufferFull) {
		line, tooLong, n, err = j.readLong(line)
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if !errors.Is(err, io.EOF) {
			err = &ReadError{Source: j.name, Line: j.line, Err: err}
		}
		j.err = err
		return nil, false, err
	}
	j.line++
	j.off, j.next = j.next, j.next+n
	if !tooLong {
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		tooLong = len(line) > MaxLineSize+bomRoom(j.line, line)
	}
	if tooLong {
		line = line[:min(len(line), tooLongPrefix)]
	}
	return line, tooLong, nil
}

// readLong assembles a line that does not fit the read buffer, starting
// with frag. Once the line is certainly too long it stops keeping bytes and
// skips to the end of the line. n is how many bytes it consumed, frag's
// included.
func (j *JSONLReader) readLong(frag []byte) (line []byte, tooLong bool, n int64, err error) {
	limit := MaxLineSize + len("\r\n") + bomRoom(j.line+1, frag)
	j.long = append(j.long[:0], frag...)
	n = int64(len(frag))
	for {
		frag, err = j.r.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong && len(j.long)+len(frag) > limit {
			tooLong = true
			j.long = j.long[:min(len(j.long), tooLongPrefix)]
		}
		if !tooLong {
			j.long = append(j.long, frag...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	line = j.long
	if cap(j.long) > 4*readBufferSize {
		j.long = nil // the caller's slice keeps it alive; we need not
	}
	return line, tooLong, n, err
}
