package main

import (
	"context"
	"sync"

	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/recovery"
)

// progressSource tells the progress display where a source starts (a
// resumed file: the bytes before are no work left) and how far it is.
// mu serialises the display between sources read concurrently.
type progressSource struct {
	recovery.Source
	prog *progress.Input
	mu   *sync.Mutex
}

// Unwrap returns the source shown (package relay looks inside).
func (s progressSource) Unwrap() recovery.Source { return s.Source }

// offsetter is what the input package's sources say of their position.
type offsetter interface{ Offset() int64 }

func (s progressSource) Start(ctx context.Context, cursor []byte) error {
	s.mu.Lock()
	s.prog.Clear() // starting a source may log
	s.mu.Unlock()
	err := s.Source.Start(ctx, cursor)
	if o, ok := s.Source.(offsetter); ok && err == nil {
		s.mu.Lock()
		s.prog.StartInput(o.Offset())
		s.mu.Unlock()
	}
	return err
}

// Committed passes commits on to a source that wants them.
func (s progressSource) Committed(cursor []byte) {
	if a, ok := s.Source.(recovery.Acknowledger); ok {
		a.Committed(cursor)
	}
}

// offset is how far the source has read, in bytes (0 when unknown).
func (s progressSource) offset() int64 {
	if o, ok := s.Source.(offsetter); ok {
		return o.Offset()
	}
	return 0
}
