package input

import (
	"errors"
	"fmt"
	"os"

	"github.com/cdclog/cdclog/recovery"
)

// Open returns the source for path: a File for a regular file, a Stream
// for anything else that can be read (a named pipe, a device,
// /dev/stdin). Following is for regular files only.
func Open(path string, o FileOptions) (recovery.Source, error) {
	f, err := OpenFile(path, o)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, ErrNotRegular) {
		return nil, err
	}
	if o.Follow {
		return nil, fmt.Errorf("input %s: --follow needs a regular file: %w", path, ErrNotRegular)
	}
	r, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	if fi, err := r.Stat(); err == nil && fi.IsDir() {
		r.Close()
		return nil, fmt.Errorf("input %s is a directory", path)
	}
	return NewStream(r, o.Format, path, o.Logger), nil
}
