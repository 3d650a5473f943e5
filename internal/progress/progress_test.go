package progress

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestABarDrawsItsLabelDescriptionAndCount(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, Options{Label: "ingest", Total: 1000, Bytes: true})
	time.Sleep(Interval) // the display is throttled
	p.Describe(func() string { return "frontier 7" })
	time.Sleep(Interval)
	p.Add(400)
	p.Finish()
	if out := buf.String(); !strings.Contains(out, "ingest frontier 7") || !strings.Contains(out, "400/1000 B") {
		t.Fatalf("no bar drawn: %q", out)
	}
}

func TestASpinnerCountsItemsWhenTheTotalIsUnknown(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, Options{Label: "replay", Unit: "record"})
	time.Sleep(Interval)
	p.Add(42)
	// The display is throttled: on a loaded machine the first redraw may
	// come later. Adding nothing redraws once the interval has passed.
	for i := 0; i < 50 && !strings.Contains(buf.String(), "record/s"); i++ {
		time.Sleep(Interval)
		p.Add(0)
	}
	p.Finish()
	if out := buf.String(); !strings.Contains(out, "42") || !strings.Contains(out, "record/s") {
		t.Fatalf("spinner output: %q", out)
	}
}

func TestNilDisplaysDoNothing(t *testing.T) {
	var p *Bar
	p.Add(1)
	p.Shrink(1)
	p.Describe(func() string { t.Fatal("description built for a nil Bar"); return "" })
	p.Clear()
	p.Finish()
	if r := p.Rate(10, "msg"); r != "" {
		t.Fatalf("a nil Bar's rate is %q", r)
	}
	var ip *Input
	ip.StartInput(10)
	ip.Batch(20, 3, func() (uint64, bool) { t.Fatal("frontier asked for a nil Input"); return 0, false })
	ip.Clear()
	ip.Finish()
	var c *Counter
	c.Draw(5)
	c.Clear()
	var l *Logger
	l.Stop()
	var tl *Tally
	tl.Report(1, 2)
	tl.Finish()
}

func TestATallyDrawsTheTotalOfItsFirstReportAndMovesToDone(t *testing.T) {
	var buf bytes.Buffer
	tl := NewTally(&buf, Options{Label: "replay", Unit: "record"})
	tl.Report(0, 1000)
	time.Sleep(Interval)
	tl.Report(300, 5) // a later total is ignored
	time.Sleep(Interval)
	tl.Report(700, 0)
	if tl.shown != 700 || tl.bar.total != 1000 {
		t.Errorf("shown %d of %d, want 700 of 1000", tl.shown, tl.bar.total)
	}
	tl.Finish()
	if out := buf.String(); !strings.Contains(out, "/1000") {
		t.Fatalf("no bar of 1000 drawn: %q", out)
	}
	NewTally(&buf, Options{}).Finish() // nothing reported: nothing to erase
}

func TestInputSizeIsKnownOnlyForRegularFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for name, data := range map[string]string{a: "12345", b: "123"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok := InputSize([]string{a, b}); !ok || n != 8 {
		t.Fatalf("two files: %d, %v", n, ok)
	}
	for _, names := range [][]string{nil, {"-"}, {a, "-"}, {a, filepath.Join(dir, "missing")}, {dir}} {
		if _, ok := InputSize(names); ok {
			t.Fatalf("%q: size reported as known", names)
		}
	}
}

func TestSIRendersCountsWithTheirSuffix(t *testing.T) {
	for v, want := range map[float64]string{950: "950", 1234: "1.2k", 12345: "12k", 4.1e6: "4.1M", 2.5e9: "2.5G"} {
		if got := SI(v); got != want {
			t.Errorf("SI(%v) = %q, want %q", v, got, want)
		}
	}
	if FrontierText(7, false) != "frontier 7" || FrontierText(7, true) != "complete" {
		t.Errorf("FrontierText: %q, %q", FrontierText(7, false), FrontierText(7, true))
	}
}

func TestACounterDrawsAtMostOnceASecondAndClearsWhatItDrew(t *testing.T) {
	var buf bytes.Buffer
	c := NewCounter(&buf, "merged", time.Now())
	c.Clear()
	if buf.Len() != 0 {
		t.Fatalf("clearing a line never drawn wrote %q", buf.String())
	}
	c.Draw(10)
	c.Draw(20) // within the second: not drawn
	if out := buf.String(); !strings.HasPrefix(out, "\rmerged 10 records (") || strings.Contains(out, "20 records") {
		t.Fatalf("drawn %q", out)
	}
	c.Clear()
	if !strings.HasSuffix(buf.String(), "\r\033[K") {
		t.Fatalf("not cleared: %q", buf.String())
	}
}

// syncBuffer is a bytes.Buffer for a logger on another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestALoggerLogsEveryIntervalUntilStopped(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l := StartLog(log, "ingest progress", 5*time.Millisecond, func() []slog.Attr { return []slog.Attr{slog.Int("messages", 3)} })
	for i := 0; i < 400 && strings.Count(buf.String(), "\n") < 2; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	l.Stop()
	out := buf.String()
	if strings.Count(out, `msg="ingest progress" messages=3`) < 2 {
		t.Fatalf("log: %q", out)
	}
	time.Sleep(20 * time.Millisecond)
	if buf.String() != out {
		t.Fatalf("logged after Stop: %q", buf.String()[len(out):])
	}
	if StartLog(log, "x", 0, nil) != nil {
		t.Fatal("a Logger started with no interval")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func TestAnInputCountsEveryBatchReportedConcurrently(t *testing.T) {
	ip := NewInput(&lockedBuffer{}, "ingest", []string{"-"})
	const goroutines, batches = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			ip.StartInput(0)
			for i := range batches {
				ip.Batch(int64(i), 3, func() (uint64, bool) { return uint64(i), false })
				ip.Clear()
			}
		})
	}
	wg.Wait()
	ip.Finish()
	if want := uint64(goroutines * batches * 3); ip.msgs != want {
		t.Fatalf("counted %d messages, want %d", ip.msgs, want)
	}
}
