package main

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// headSize is how much of an input file's beginning identifies it, and
// tailSize how much of what precedes the committed offset.
const (
	headSize = 64 << 10
	tailSize = 4 << 10
)

// inputCursor is what ingest commits about a regular input file with each
// batch: how far it got, and a fingerprint of the file's head, so that a
// rerun on the same file resumes there and a rerun on another file with
// the same name starts over.
type inputCursor struct {
	Offset  int64  `json:"offset"`
	Line    int64  `json:"line"`
	HeadLen int64  `json:"head_len"`
	HeadCRC uint32 `json:"head_crc"`
	// TailCRC hashes the tailSize bytes before Offset (fewer near the
	// start): the part of the file a resume relies on most.
	TailCRC uint32 `json:"tail_crc"`
}

// source is one opened input, positioned where ingest resumes.
type source struct {
	reader *cdc.Reader
	file   *os.File // the regular file, when the input is one
	cursor string   // cursor name; empty for a stream that cannot be resumed
	head   inputCursor
	close  func()
}

// mark returns the cursor value for the input read up to offset. A read
// error leaves the tail unhashed, which only makes a later resume start
// over.
func (s *source) mark(offset, line int64) []byte {
	c := s.head
	c.Offset, c.Line = offset, line
	c.TailCRC, _ = tailCRC(s.file, offset)
	b, _ := json.Marshal(c)
	return b
}

// tailCRC hashes the bytes of f just before offset.
func tailCRC(f *os.File, offset int64) (uint32, error) {
	start := max(0, offset-tailSize)
	return crcRange(f, start, offset-start)
}

// crcRange hashes (CRC-32C) the n bytes of f from start, or as many as the
// file holds. It is called for every batch (tailCRC), so it reads into a
// buffer on the stack: io.Copy allocated 32 KiB each time.
func crcRange(f *os.File, start, n int64) (uint32, error) {
	var buf [tailSize]byte
	// MakeTable returns the same table every time for Castagnoli.
	table := crc32.MakeTable(crc32.Castagnoli)
	var sum uint32
	for n > 0 {
		k, err := f.ReadAt(buf[:min(n, int64(len(buf)))], start)
		sum = crc32.Update(sum, table, buf[:k])
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

// openSource opens name for ingest. A regular file whose committed cursor
// still matches its head resumes at the committed offset.
func openSource(e *env, name string, p *recovery.Processor) (*source, error) {
	r, label, closeFn, err := openInput(e, name)
	if err != nil {
		return nil, err
	}
	s := &source{reader: cdc.NewReader(r, e.inFormat, label), close: closeFn}
	f, ok := r.(*os.File)
	if !ok || f == os.Stdin {
		return s, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return s, nil
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return s, nil
	}
	s.cursor, s.file = "input:"+abs, f
	if s.head, err = fingerprint(f, min(fi.Size(), headSize)); err != nil {
		closeFn()
		return nil, withCode(exitFailure, fmt.Errorf("read %s: %w", name, err))
	}
	var prev inputCursor
	if b := p.Cursor(s.cursor); b != nil && json.Unmarshal(b, &prev) == nil {
		if err := s.resume(e, f, fi.Size(), prev); err != nil {
			closeFn()
			return nil, err
		}
	}
	return s, nil
}

// resume seeks to the committed offset if the file is the one committed.
func (s *source) resume(e *env, f *os.File, size int64, prev inputCursor) error {
	head, err := fingerprint(f, prev.HeadLen)
	tail, terr := tailCRC(f, prev.Offset)
	if err != nil || terr != nil || prev.HeadLen > size || prev.Offset > size ||
		head.HeadCRC != prev.HeadCRC || tail != prev.TailCRC {
		e.log.Info("input changed since it was last ingested; reading it from the start (what was committed is dropped as duplicates)",
			"file", f.Name())
		return nil
	}
	if _, err := f.Seek(prev.Offset, io.SeekStart); err != nil {
		return withCode(exitFailure, fmt.Errorf("seek %s: %w", f.Name(), err))
	}
	s.reader.Resume(prev.Offset, prev.Line)
	s.head = prev
	if prev.Offset == size {
		e.log.Info("input already ingested", "file", f.Name(), "bytes", size)
	} else {
		e.log.Info("resuming input", "file", f.Name(), "offset", prev.Offset, "line", prev.Line+1)
	}
	return nil
}

// fingerprint hashes the first n bytes of f, leaving its offset at 0.
func fingerprint(f *os.File, n int64) (inputCursor, error) {
	sum, err := crcRange(f, 0, n)
	if err != nil {
		return inputCursor{}, err
	}
	return inputCursor{HeadLen: n, HeadCRC: sum}, nil
}
