package cdc

import (
	"fmt"
	"io"
	"os"
)

// OpenInput returns a Reader of messages in format f from the named
// input, and the function that closes it: stdin for "" or "-" (its
// positions name it "stdin", and closing leaves it open), otherwise the
// file of that name, its positions naming it as given. A file that cannot
// be opened is an error saying "open input: ".
func OpenInput(name string, stdin io.Reader, f Format) (*Reader, func() error, error) {
	if name == "" || name == "-" {
		return NewReader(stdin, f, "stdin"), func() error { return nil }, nil
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("open input: %w", err)
	}
	return NewReader(file, f, name), file.Close, nil
}
