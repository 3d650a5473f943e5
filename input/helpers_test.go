package input

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// update returns the JSON line of an update of data "k<i>" at time i.
func update(i int) string {
	return fmt.Sprintf(`{"update":{"data":"k%d","time":%d,"diff":1}}`+"\n", i, i)
}

// updates returns the lines of updates from..to-1.
func updates(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		b.WriteString(update(i))
	}
	return b.String()
}

func newBatch() *recovery.SourceBatch {
	return &recovery.SourceBatch{Max: 1000, Policy: cdc.Fail}
}

// readUntil calls Read until it returns an error or d passes, and returns
// the messages' times and the last error.
func readUntil(t *testing.T, ctx context.Context, src recovery.Source, b *recovery.SourceBatch) ([]uint64, error) {
	t.Helper()
	var times []uint64
	for {
		b.Reset()
		err := src.Read(ctx, b)
		for _, m := range b.Msgs {
			times = append(times, m.Update.Time)
		}
		if err != nil {
			return times, err
		}
	}
}

// readOne calls Read once, failing the test if it takes over d.
func readOne(t *testing.T, src recovery.Source, b *recovery.SourceBatch, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	b.Reset()
	err := src.Read(ctx, b)
	if ctx.Err() != nil {
		t.Fatalf("Read did not return within %v (it held %d messages)", d, b.Len())
	}
	return err
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, content); err != nil {
		t.Fatal(err)
	}
}

func seq(from, to int) []uint64 {
	var s []uint64
	for i := from; i < to; i++ {
		s = append(s, uint64(i))
	}
	return s
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
