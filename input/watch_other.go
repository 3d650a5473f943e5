//go:build !linux

package input

import (
	"context"
	"errors"
	"os"
	"time"
)

// watcher is not available on this system: a followed file is polled.
type watcher struct{}

// newWatcher says that a followed file must be polled here.
func newWatcher(string) (*watcher, error) {
	return nil, errors.New("no file change notification on this system: polling")
}

func (*watcher) follow(*os.File) {}

func (*watcher) wait(context.Context, time.Duration) error { return errors.ErrUnsupported }

func (*watcher) close() error { return nil }
