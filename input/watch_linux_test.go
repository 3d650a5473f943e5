//go:build linux

package input

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// longPoll is a poll so long that a test reading within it shows the
// watcher, not the poll, woke the wait.
const longPoll = time.Hour

// followedSlowly opens path to follow it with longPoll, started at no
// cursor.
func followedSlowly(t *testing.T, path string) *File {
	t.Helper()
	f, err := OpenFile(path, FileOptions{Follow: true, Poll: longPoll, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if f.w == nil {
		t.Skip("no inotify here")
	}
	if err := f.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// On Linux a followed file's wait ends as soon as the file is written, a
// new file is at its path, or the file it waits for appears: not at the
// next poll.
func TestAFollowedFileWakesAtOnceOnLinux(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, dir string) // the file before the wait
		during func(dir string) error         // what ends the wait, while Read waits
		want   []uint64
	}{
		{"appended to",
			func(t *testing.T, dir string) { writeFile(t, dir, "in.jsonl", "") },
			func(dir string) error { return appendTo(dir+"/in.jsonl", updates(0, 2)) },
			seq(0, 2)},
		{"a line end written after a line",
			func(t *testing.T, dir string) {
				writeFile(t, dir, "in.jsonl", updates(0, 1)[:len(update(0))-1])
			},
			func(dir string) error { return appendTo(dir+"/in.jsonl", "\n") },
			seq(0, 1)},
		{"rotated",
			func(t *testing.T, dir string) { writeFile(t, dir, "in.jsonl", "") },
			func(dir string) error {
				if err := os.Rename(dir+"/in.jsonl", dir+"/in.jsonl.1"); err != nil {
					return err
				}
				return os.WriteFile(dir+"/in.jsonl", []byte(updates(5, 7)), 0o644)
			},
			seq(5, 7)},
		{"cut short and written again",
			func(t *testing.T, dir string) { writeFile(t, dir, "in.jsonl", "") },
			func(dir string) error { return os.WriteFile(dir+"/in.jsonl", []byte(updates(3, 4)), 0o644) },
			seq(3, 4)},
		{"created",
			func(*testing.T, string) {},
			func(dir string) error { return os.WriteFile(dir+"/in.jsonl", []byte(updates(0, 3)), 0o644) },
			seq(0, 3)},
		{"moved to the path",
			func(*testing.T, string) {},
			func(dir string) error {
				if err := os.WriteFile(dir+"/tmp", []byte(updates(0, 3)), 0o644); err != nil {
					return err
				}
				return os.Rename(dir+"/tmp", dir+"/in.jsonl")
			},
			seq(0, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.before(t, dir)
			f := followedSlowly(t, dir+"/in.jsonl")
			// One read that waits, then the change.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			if err := f.Read(ctx, newBatch()); ctx.Err() == nil {
				t.Fatalf("read before the change: %v", err)
			}
			cancel()
			changed := make(chan error, 1)
			go func() { time.Sleep(20 * time.Millisecond); changed <- tc.during(dir) }()
			start := time.Now()
			got, _ := collect(t, f, len(tc.want), 10*time.Second)
			if err := <-changed; err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("read %v, want %v", got, tc.want)
			}
			t.Logf("read after %v", time.Since(start))
		})
	}
}

// A followed file ends its wait when its context ends, not at the poll.
func TestAFollowedFileWaitEndsWithItsContextOnLinux(t *testing.T) {
	f := followedSlowly(t, writeFile(t, t.TempDir(), "in.jsonl", ""))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := f.Read(ctx, newBatch())
	if ctx.Err() == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Read returned %v after %v", err, time.Since(start))
	}
}

// Following holds the file and the inotify instance; Close releases both.
func TestAFollowedFileReleasesItsWatcherWhenClosed(t *testing.T) {
	dir := t.TempDir()
	before := openFDs(t)
	for range 20 {
		f, err := OpenFile(writeFile(t, dir, "in.jsonl", ""), FileOptions{Follow: true, Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if open := openFDs(t) - before; open > 2 {
		t.Fatalf("%d descriptors left open", open)
	}
}

// appendTo appends s to the file at path.
func appendTo(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
