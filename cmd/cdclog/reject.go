package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// rejectSink applies --on-error skip or quarantine for the commands that
// have no database: it counts each rejected message, reports it on stderr,
// and under quarantine writes it to a JSON Lines file.
type rejectSink struct {
	e     *env
	file  *os.File
	w     *bufio.Writer
	enc   *json.Encoder
	count uint64
}

// rejectEntry is one line of a quarantine file.
type rejectEntry struct {
	Source    string `json:"source"`
	Line      int64  `json:"line,omitempty"`
	Offset    int64  `json:"offset"`
	Reason    string `json:"reason"`
	Raw       string `json:"raw,omitempty"`
	RawBase64 []byte `json:"raw_base64,omitempty"`
}

func openRejectSink(e *env, policy cdc.ErrorPolicy, path string) (*rejectSink, error) {
	switch {
	case policy == cdc.Quarantine && path == "":
		return nil, usageError("--on-error quarantine needs --quarantine FILE (there is no database to keep rejected messages in)")
	case policy != cdc.Quarantine && path != "":
		return nil, usageError("--quarantine is only used with --on-error quarantine")
	}
	s := &rejectSink{e: e}
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, withCode(exitFailure, fmt.Errorf("quarantine file: %w", err))
		}
		s.file, s.w = f, bufio.NewWriter(f)
		s.enc = json.NewEncoder(s.w)
		s.enc.SetEscapeHTML(false)
	}
	return s, nil
}

// rejectMessage sets aside a decoded message the receiver refused.
func (s *rejectSink) rejectMessage(at cdc.Pos, m *cdc.Message, err error) error {
	reason := err.Error()
	var v *demangle.ViolationError
	if errors.As(err, &v) {
		reason = fmt.Sprintf("protocol violation (%s): %s; earlier message at %s", v.Kind, v.Detail, v.EarlierAt)
	}
	return s.add(rejectEntry{Source: at.Source, Line: at.Line, Offset: at.Offset, Reason: reason}, cdc.AppendJSON(nil, m))
}

// rejectInput sets aside input that could not be decoded.
func (s *rejectSink) rejectInput(de *cdc.DecodeError, raw []byte) error {
	return s.add(rejectEntry{Source: de.Pos.Source, Line: de.Pos.Line, Offset: de.Pos.Offset, Reason: de.Reason}, raw)
}

func (s *rejectSink) add(en rejectEntry, raw []byte) error {
	s.count++
	s.e.log.Warn("rejected input", "at", cdc.Pos{Source: en.Source, Line: en.Line, Offset: en.Offset}.String(), "reason", en.Reason)
	if s.enc == nil {
		return nil
	}
	if utf8.Valid(raw) {
		en.Raw = string(raw)
	} else {
		en.RawBase64 = raw
	}
	if err := s.enc.Encode(en); err != nil {
		return withCode(exitFailure, fmt.Errorf("write quarantine file: %w", err))
	}
	return nil
}

func (s *rejectSink) close() error {
	if s == nil || s.file == nil {
		return nil
	}
	err := s.w.Flush()
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	return err
}
