package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// line is one line of a scan's answer.
type line[T any] struct {
	Item  *T     `json:"item,omitempty"`
	End   bool   `json:"end,omitempty"`
	Error string `json:"error,omitempty"`
}

// Info is what a Client learns on Dial: who answers, and the numbers a
// Reader gives without a scan.
type Info struct {
	PID       int    `json:"pid"`
	DB        string `json:"db"`
	OutputEnd uint64 `json:"output_end"`
	// OutputStart is the first record the output log holds (0 from a
	// cdclog before retention: read as 1).
	OutputStart uint64 `json:"output_start"`
	Frontier    uint64 `json:"frontier"`
	Complete    bool   `json:"complete"`
	WALFloor    uint64 `json:"wal_floor"`
}

// errorBody is a failed request's answer.
type errorBody struct {
	Error string `json:"error"`
}

// scanWriter writes a scan's items as JSON Lines.
type scanWriter[T any] struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newScanWriter[T any](w io.Writer) *scanWriter[T] {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &scanWriter[T]{w: bw, enc: json.NewEncoder(bw)}
}

func (s *scanWriter[T]) item(v *T) error { return s.enc.Encode(line[T]{Item: v}) }

// all writes each of list, then the end, or err (the error that came
// instead of list) as the last line. It stops without an end when the
// client has gone away.
func (s *scanWriter[T]) all(list []T, err error) {
	if err == nil {
		for i := range list {
			if err = s.item(&list[i]); err != nil {
				return // the client went away
			}
		}
	}
	s.end(err)
}

// end writes the last line: the end, or the error that stopped the scan.
func (s *scanWriter[T]) end(err error) error {
	l := line[T]{End: err == nil}
	if err != nil {
		l.Error = err.Error()
	}
	if werr := s.enc.Encode(l); werr != nil {
		return werr
	}
	return s.w.Flush()
}

// ErrRemote wraps an error the answering process reported.
var ErrRemote = errors.New("the running cdclog reported")

// readScan reads a scan's answer, calling fn for each item, until its end.
func readScan[T any](r io.Reader, fn func(*T) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	for {
		var l line[T]
		if err := dec.Decode(&l); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read the answer: %w", err)
		}
		switch {
		case l.Error != "":
			return fmt.Errorf("%w: %s", ErrRemote, l.Error)
		case l.End:
			return nil
		case l.Item != nil:
			if err := fn(l.Item); err != nil {
				return err
			}
		}
	}
}
