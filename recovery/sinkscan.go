package recovery

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/cdclog/cdclog/cdc"
)

// recordScanner reads the records of an output file from an offset on, in
// the sink's format, to check the bytes past the committed size before
// they are cut.
type recordScanner struct {
	r      io.Reader
	format cdc.Format
	buf    []byte
	start  int
	end    int
	eof    bool
	// off is the file offset of buf[start].
	off int64
}

// errTorn ends a scan whose last bytes are not a whole record: a write
// cut short by a crash.
var errTorn = errors.New("torn record")

// maxScanRecord bounds the record a scan will buffer: twice the largest
// message cdclog reads (an output record longer than that is not one this
// database wrote).
const maxScanRecord = 2 * cdc.MaxMessageSize

func newRecordScanner(r io.ReaderAt, from, to int64, f cdc.Format) *recordScanner {
	return &recordScanner{r: io.NewSectionReader(r, from, to-from), format: f, off: from, buf: make([]byte, 64<<10)}
}

// next returns the next whole record's bytes (valid until the next call)
// and decodes it into m. At the end it returns io.EOF; when only part of
// a record is left, that part and errTorn; for bytes that are not a
// record, an error naming their offset.
func (s *recordScanner) next(m *cdc.Message) ([]byte, error) {
	for {
		b := s.buf[s.start:s.end]
		if len(b) == 0 && s.eof {
			return nil, io.EOF
		}
		n, err := s.parse(b, m)
		switch {
		case err == nil:
			s.start += n
			s.off += int64(n)
			return b[:n], nil
		case !errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("byte %d: %v", s.off, err)
		case s.eof:
			return b, errTorn
		case len(b) >= maxScanRecord:
			return nil, fmt.Errorf("byte %d: a record longer than %d bytes", s.off, maxScanRecord)
		}
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
}

// parse decodes the record at the front of b; io.ErrUnexpectedEOF means
// that b holds only part of it.
func (s *recordScanner) parse(b []byte, m *cdc.Message) (int, error) {
	if s.format == cdc.Msgpack {
		return cdc.ParseMsgpack(b, m)
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if err := cdc.ParseJSON(b[:i], m); err != nil {
		return 0, err
	}
	return i + 1, nil
}

// fill reads more, moving the unread bytes to the front of the buffer
// (a bigger one when they fill it).
func (s *recordScanner) fill() error {
	if s.end == len(s.buf) {
		pending := s.end - s.start
		nb := s.buf
		if pending > len(s.buf)/2 {
			nb = make([]byte, 2*len(s.buf))
		}
		copy(nb, s.buf[s.start:s.end])
		s.buf, s.start, s.end = nb, 0, pending
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		return fmt.Errorf("read the output file: %w", err)
	}
	return nil
}

// streamChain checks that records continue a clean stream: a progress
// record starts where the previous one ended, updates come in time order
// between them, at or above the frontier, and nothing follows the end of
// the stream. (It does not require a progress record to cover the updates
// before it: a statement split for size may leave them to the next one.)
type streamChain struct {
	at, done bool // at: the frontier is known
	frontier uint64
	// updates since the last progress record: how many, and the last time
	updates  int
	lastTime uint64
}

// push checks m and moves the chain past it.
func (c *streamChain) push(m *cdc.Message) error {
	if c.done {
		return fmt.Errorf("a record after the end of the stream: %s", m)
	}
	switch m.Kind {
	case cdc.KindUpdate:
		t := m.Update.Time
		if c.at && t < c.frontier {
			return fmt.Errorf("%s is below the frontier %d", m, c.frontier)
		}
		if c.updates > 0 && t < c.lastTime {
			return fmt.Errorf("%s comes after an update at time %d", m, c.lastTime)
		}
		c.updates++
		c.lastTime = t
	case cdc.KindProgress:
		p := &m.Progress
		if c.at && p.Lower != c.frontier {
			return fmt.Errorf("%s does not start at the frontier %d", m, c.frontier)
		}
		c.at, c.frontier, c.done = true, p.Upper, p.Unbounded
		c.updates = 0
	default:
		return fmt.Errorf("%s is not an output record", m)
	}
	return nil
}

// advance moves the chain past m without checking it (a record of the
// output log, which is the stream itself).
func (c *streamChain) advance(m *cdc.Message) {
	switch m.Kind {
	case cdc.KindUpdate:
		c.updates++
		c.lastTime = m.Update.Time
	case cdc.KindProgress:
		c.at, c.frontier, c.done = true, m.Progress.Upper, m.Progress.Unbounded
		c.updates = 0
	}
}
