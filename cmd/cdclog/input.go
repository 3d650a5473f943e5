package main

import (
	"fmt"
	"io"
	"os"
)

// openInput opens a named input; "-" or "" is stdin.
func openInput(e *env, name string) (io.Reader, string, func(), error) {
	if name == "" || name == "-" {
		return e.stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, name, nil, withCode(exitFailure, fmt.Errorf("open input: %w", err))
	}
	return f, name, func() { f.Close() }, nil
}
