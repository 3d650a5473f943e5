package recovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// openSink opens the output file at path, failing t on error.
func openSink(t testing.TB, path string) *FileSink {
	t.Helper()
	s, err := OpenFileSink(path, FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openWithSink opens the database at db writing the output file out.
func openWithSink(t testing.TB, db, out string, o Options) (*Processor, error) {
	t.Helper()
	s := openSink(t, out)
	o.Sink, o.SinkName = s, out
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	p, err := Open(db, o)
	if err != nil {
		s.Close()
	}
	return p, err
}

// runWithSink appends msgs to the database at db, writing out, and closes.
func runWithSink(t testing.TB, db, out string, msgs []cdc.Message) {
	t.Helper()
	runWithSinkOptions(t, db, out, msgs, Options{BatchMessages: 300})
}

func runWithSinkOptions(t testing.TB, db, out string, msgs []cdc.Message, o Options) {
	t.Helper()
	p, err := openWithSink(t, db, out, o)
	if err != nil {
		t.Fatalf("open with output file %s: %v", filepath.Base(out), err)
	}
	appendAll(t, p, msgs, 100)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// asInterrupted makes the database's checkpoint what it is after a run
// that was killed with batches in flight: a clean Close tightens the
// output file's Limit to its size (nothing can be left past it), a
// commit sets it sinkAllowance further.
func asInterrupted(t testing.TB, db string) {
	t.Helper()
	editCheckpoint(t, db, func(cp *checkpoint) { cp.Sink.Limit = cp.Sink.Size + sinkAllowance })
}

func appendToFile(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestTheOutputFileIsLockedWhileAProcessorWritesIt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	p, err := openWithSink(t, filepath.Join(dir, "a.db"), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = OpenFileSink(out, FileSinkOptions{LockTimeout: 150 * time.Millisecond})
	if !errors.Is(err, ErrSinkLocked) {
		t.Fatalf("second OpenFileSink while a processor writes the file: %v, want ErrSinkLocked", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 2*time.Second {
		t.Fatalf("gave up after %v, want the 150ms lock timeout", waited)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenFileSink(out, FileSinkOptions{LockTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	s.Close()
}

func TestOpenFileSinkRefusesStreams(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/stdout", link); err != nil {
		t.Fatal(err)
	}
	fdDir := filepath.Join(dir, "fds")
	if err := os.Symlink("/proc/self/fd", fdDir); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/null", fifo, "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1", link, filepath.Join(fdDir, "1")} {
		s, err := OpenFileSink(path, FileSinkOptions{})
		if !errors.Is(err, ErrSinkStream) {
			if s != nil {
				s.Close()
			}
			t.Errorf("OpenFileSink(%s): %v, want ErrSinkStream", path, err)
		}
	}
	// A regular file, new or not, through a symbolic link or not, is a sink.
	real := filepath.Join(dir, "real.jsonl")
	if err := os.Symlink(real, filepath.Join(dir, "to-real")); err != nil {
		t.Fatal(err)
	}
	for i, path := range []string{filepath.Join(dir, "to-real"), real} {
		s, err := OpenFileSink(path, FileSinkOptions{})
		if err != nil {
			t.Fatalf("OpenFileSink(%s): %v", path, err)
		}
		if s.Created() != (i == 0) {
			t.Errorf("OpenFileSink(%s): Created() = %v", path, s.Created())
		}
		s.Close()
	}
}

// damage is a way an output file comes to hold what the database did not
// write, applied to a file the database wrote, with its committed bytes.
type damage struct {
	name  string
	apply func(t *testing.T, out string, committed []byte)
	want  error
	// cleanOnly: refused only after a clean Close; after a killed run the
	// damage is what the run can have left.
	cleanOnly bool
	// saysKilled, when set, is in the error after a killed run.
	saysKilled string
}

func TestOpenRefusesAnOutputFileWhoseBytesItCannotProveItsOwn(t *testing.T) {
	clean := cleanStream(61, 0, 400)
	other := inMemory(t, cleanStream(62, 0, 800)) // another database's output
	cases := []damage{
		{"another database's output took its place", func(t *testing.T, out string, _ []byte) {
			os.Remove(out)
			os.WriteFile(out, other, 0o644)
		}, ErrSinkChanged, false, ""},
		{"another file of the same size was moved to its path", func(t *testing.T, out string, committed []byte) {
			moved := filepath.Join(filepath.Dir(out), "moved")
			b := bytes.ToUpper(committed)
			os.WriteFile(moved, b, 0o644)
			os.Rename(moved, out)
		}, ErrSinkChanged, false, ""},
		{"a byte of its committed tail changed", func(t *testing.T, out string, committed []byte) {
			b := append([]byte(nil), committed...)
			b[len(b)-10] ^= 1
			os.WriteFile(out, b, 0o644)
		}, ErrSinkChanged, false, ""},
		{"a log was appended after it", func(t *testing.T, out string, _ []byte) {
			appendToFile(t, out, []byte("2026-01-01 12:00:00 service started\n2026-01-01 12:00:01 ok\n"))
		}, ErrSinkExcess, false, "past every record this database committed"},
		{"records that do not continue its stream were appended", func(t *testing.T, out string, _ []byte) {
			appendToFile(t, out, inMemory(t, cleanStream(63, 0, 10)))
		}, ErrSinkExcess, false, ""},
		{"a record that continues its stream was appended", func(t *testing.T, out string, _ []byte) {
			m := cdc.NewProgress(400, 401)
			appendToFile(t, out, append(cdc.AppendJSON(nil, &m), '\n'))
		}, ErrSinkExcess, false, ""},
		{"a byte far before its committed tail changed", func(t *testing.T, out string, committed []byte) {
			f, _ := os.OpenFile(out, os.O_WRONLY, 0)
			defer f.Close()
			b := committed[100] ^ 1
			f.WriteAt([]byte{b}, 100)
		}, ErrSinkChanged, false, ""},
		{"more valid records than an interrupted run can leave were appended", func(t *testing.T, out string, _ []byte) {
			var b []byte
			for f := uint64(400); len(b) <= sinkAllowance; f++ {
				m := cdc.NewProgress(f, f+1)
				b = append(cdc.AppendJSON(b, &m), '\n')
			}
			appendToFile(t, out, b)
		}, ErrSinkExcess, false, ""},
		{"it was copied, and the copy grew, and took its place", func(t *testing.T, out string, committed []byte) {
			copied := filepath.Join(filepath.Dir(out), "copy")
			m := cdc.NewProgress(400, 401)
			os.WriteFile(copied, append(cdc.AppendJSON(append([]byte(nil), committed...), &m), '\n'), 0o644)
			os.Rename(copied, out)
		}, ErrSinkExcess, false, ""},
		{"it was cut short", func(t *testing.T, out string, committed []byte) {
			os.Truncate(out, int64(len(committed)-1))
		}, ErrSinkShort, false, ""},
	}
	for _, tc := range cases {
		for _, killed := range []bool{false, true} {
			if killed && tc.cleanOnly {
				continue
			}
			name := tc.name + "/after a clean close"
			if killed {
				name = tc.name + "/after a killed run"
			}
			t.Run(name, func(t *testing.T) { refusesDamage(t, clean, tc, killed) })
		}
	}
}

// refusesDamage checks that Open refuses an output file with damage tc
// applied, and leaves it as it is.
func refusesDamage(t *testing.T, clean []cdc.Message, tc damage, killed bool) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	runWithSink(t, db, out, clean)
	if killed {
		asInterrupted(t, db)
	}
	committed := readFileOrNil(t, out)
	if len(committed) == 0 {
		t.Fatal("no output")
	}
	tc.apply(t, out, committed)
	before := readFileOrNil(t, out)
	p, err := openWithSink(t, db, out, Options{})
	if err == nil {
		p.Close()
	}
	if !errors.Is(err, tc.want) {
		t.Fatalf("got %v, want %v", err, tc.want)
	}
	if !strings.Contains(err.Error(), "cdclog replay --db") {
		t.Errorf("the error does not say how to recover: %v", err)
	}
	if killed && !strings.Contains(err.Error(), tc.saysKilled) {
		t.Errorf("the error does not say %q: %v", tc.saysKilled, err)
	}
	if after := readFileOrNil(t, out); !bytes.Equal(after, before) {
		t.Fatalf("the refused file was changed: %d bytes, had %d", len(after), len(before))
	}
}

func readFileOrNil(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b
}

func TestOpenCutsWhatAnInterruptedRunLeft(t *testing.T) {
	msgs := cleanStream(64, 0, 600)
	first := msgs[:len(msgs)/2]
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		want, part := render(t, msgs, f), render(t, first, f)
		// What a killed run can have left past the committed size: the
		// committed records that follow, whose fsync no commit recorded,
		// the last one torn or not, with zeros where written data never
		// reached the disk.
		next, whole := want[len(part):], 0
		for whole < 900 {
			whole += recordLen(t, next[whole:], f)
		}
		holed := append([]byte(nil), next[:whole+5]...)
		clear(holed[100:140])
		cases := map[string][]byte{
			"whole records":                next[:whole],
			"whole records and a torn one": next[:whole+5],
			"a torn record alone":          next[:5],
			"zeros a power loss left":      make([]byte, 300),
			"whole records then zeros":     append(append([]byte(nil), next[:whole]...), make([]byte, 64)...),
			"records with a hole of zeros": holed,
		}
		for name, excess := range cases {
			t.Run(f.String()+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out")
				o := Options{BatchMessages: 300, SinkFormat: f}
				runWithSinkOptions(t, db, out, first, o)
				if got := readFileOrNil(t, out); !bytes.Equal(got, part) {
					t.Fatalf("first run: %d bytes, want %d", len(got), len(part))
				}
				at := checkpointOf(t, db).Sink
				runWithSinkOptions(t, db, out, msgs[len(first):], o)
				asLagging(t, db, at)
				os.Truncate(out, int64(len(part)))
				appendToFile(t, out, excess)
				runWithSinkOptions(t, db, out, nil, o)
				if got := readFileOrNil(t, out); !bytes.Equal(got, want) {
					t.Fatalf("after the excess was taken or cut and the file caught up: %d bytes, want %d", len(got), len(want))
				}
			})
		}
	}
}

// asLagging makes the database's checkpoint what it is after a run that
// was killed before any commit recorded the fsyncs of its later batches'
// output: the output file's state goes back to at, saved from an earlier
// commit, and everything else stays.
func asLagging(t testing.TB, db string, at sinkState) {
	t.Helper()
	editCheckpoint(t, db, func(cp *checkpoint) {
		cp.Sink = at
		cp.Sink.Limit = at.Size + sinkAllowance
	})
}

func TestOpenRefusesBytesAppendedAfterWhatAKilledRunLeft(t *testing.T) {
	msgs := cleanStream(65, 0, 600)
	first := msgs[:len(msgs)/2]
	foreign := func() []byte {
		m := cdc.NewUpdate([]byte(`"FOREIGN"`), 999999, 7)
		return append(cdc.AppendJSON(nil, &m), '\n')
	}
	cases := map[string]func(t *testing.T, out string, committed []byte){
		"a record that continues the stream, after every committed record": func(t *testing.T, out string, _ []byte) {
			appendToFile(t, out, foreign())
		},
		"a record that continues the stream, after a torn one": func(t *testing.T, out string, committed []byte) {
			os.Truncate(out, int64(len(committed)-3))
			appendToFile(t, out, foreign())
		},
		"one byte changed in what the killed run left": func(t *testing.T, out string, committed []byte) {
			b := append([]byte(nil), committed...)
			b[len(b)-20] ^= 1
			os.WriteFile(out, b, 0o644)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out")
			runWithSink(t, db, out, first)
			at := checkpointOf(t, db).Sink
			runWithSink(t, db, out, msgs[len(first):])
			asLagging(t, db, at)
			damage(t, out, readFileOrNil(t, out))
			before := readFileOrNil(t, out)
			p, err := openWithSink(t, db, out, Options{})
			if err == nil {
				p.Close()
			}
			if !errors.Is(err, ErrSinkExcess) {
				t.Fatalf("got %v, want ErrSinkExcess", err)
			}
			if after := readFileOrNil(t, out); !bytes.Equal(after, before) {
				t.Fatalf("the refused file was changed: %d bytes, had %d", len(after), len(before))
			}
		})
	}
}

// render is the clean output of msgs in format f.
func render(t testing.TB, msgs []cdc.Message, f cdc.Format) []byte {
	t.Helper()
	sc := newRecordScanner(bytes.NewReader(inMemory(t, msgs)), 0, 1<<40, cdc.JSONL)
	var out []byte
	var m cdc.Message
	for {
		_, err := sc.next(&m)
		if err != nil {
			return out
		}
		out = appendMessage(t, out, f, &m)
	}
}

// appendMessage is cdc.AppendMessage for data every format carries.
func appendMessage(t testing.TB, dst []byte, f cdc.Format, m *cdc.Message) []byte {
	t.Helper()
	b, err := cdc.AppendMessage(dst, f, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordLen is the length of the record at the front of b.
func recordLen(t testing.TB, b []byte, f cdc.Format) int {
	t.Helper()
	rec, err := newRecordScanner(bytes.NewReader(b), 0, int64(len(b)), f).next(new(cdc.Message))
	if err != nil {
		t.Fatal(err)
	}
	return len(rec)
}

func TestReturningToAnEarlierOutputFileChecksAndCatchesItUp(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	msgs := cleanStream(65, 0, 900)
	parts := [][]cdc.Message{msgs[:1000], msgs[1000:2000], msgs[2000:]}
	runWithSink(t, db, a, parts[0])
	runWithSink(t, db, b, parts[1])
	if got, want := readFileOrNil(t, b), inMemory(t, append(parts[0][:len(parts[0]):len(parts[0])], parts[1]...)); !bytes.Equal(got, want) {
		t.Fatalf("b: %d bytes, want the whole stream so far, %d", len(got), len(want))
	}
	runWithSink(t, db, a, parts[2])
	if got, want := readFileOrNil(t, a), inMemory(t, msgs); !bytes.Equal(got, want) {
		t.Fatalf("a, written again after b: %d bytes, want %d", len(got), len(want))
	}
	st := dbStatusOf(t, db)
	if st.OutputFile != a || st.OutputFileBytes != int64(len(inMemory(t, msgs))) {
		t.Fatalf("status: output file %s, %d bytes", st.OutputFile, st.OutputFileBytes)
	}
	// b was left behind at its own committed state: going back to it
	// catches it up too, and a b changed meanwhile is refused.
	runWithSink(t, db, b, nil)
	if got, want := readFileOrNil(t, b), inMemory(t, msgs); !bytes.Equal(got, want) {
		t.Fatalf("b, written again: %d bytes, want %d", len(got), len(want))
	}
	runWithSink(t, db, a, nil)
	os.WriteFile(b, inMemory(t, cleanStream(66, 0, 2000)), 0o644)
	if p, err := openWithSink(t, db, b, Options{}); !errors.Is(err, ErrSinkChanged) {
		if err == nil {
			p.Close()
		}
		t.Fatalf("going back to a b changed since: %v, want ErrSinkChanged", err)
	}
}

func dbStatusOf(t testing.TB, path string) Status {
	t.Helper()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAnOutputFileRegeneratedByReplayIsTakenAsItIs(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(67, 0, 600)
	runWithSink(t, db, out, msgs[:1200])
	// The file is lost and regenerated from the output log (what
	// `cdclog replay --db state.db > out.jsonl` does): a new file, holding
	// the committed records.
	os.Remove(out)
	os.WriteFile(out, storedOutput(t, db), 0o644)
	runWithSink(t, db, out, msgs[1200:])
	if got, want := readFileOrNil(t, out), inMemory(t, msgs); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
	// So is a file regenerated while another one was current: it holds
	// more than its own committed state, all of it committed records.
	other := filepath.Join(dir, "other.jsonl")
	runWithSink(t, db, other, nil)
	more := cleanStream(68, 600, 700)
	runWithSink(t, db, other, more)
	os.Remove(out)
	os.WriteFile(out, storedOutput(t, db), 0o644)
	runWithSink(t, db, out, nil)
	if got, want := readFileOrNil(t, out), storedOutput(t, db); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
}

func TestARestoredCopyOfTheOutputFileIsTakenAsItIs(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(69, 0, 400)
	runWithSink(t, db, out, msgs[:800])
	backup := filepath.Join(dir, "backup")
	os.WriteFile(backup, readFileOrNil(t, out), 0o644)
	os.Remove(out)
	os.Rename(backup, out)
	runWithSink(t, db, out, msgs[800:])
	if got, want := readFileOrNil(t, out), inMemory(t, msgs); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
}

// bigRelease is a stream whose time 0 completes last and releases more
// than sinkAllowance of output at once.
func bigRelease() []cdc.Message {
	data := []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	var msgs []cdc.Message
	const n = 20
	for i := range n {
		d := append([]byte(nil), data...)
		d[1] = byte('a' + i)
		msgs = append(msgs, cdc.NewUpdate(d, 0, 1))
	}
	return append(msgs, cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: n}))
}

func TestABatchThatReleasesMoreThanTheLimitRaisesIt(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := bigRelease()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runWithSink(t, db, out, msgs)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a batch past the limit hangs")
	}
	want := inMemory(t, msgs)
	if got := readFileOrNil(t, out); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
	cp := checkpointOf(t, db)
	// A clean Close leaves no room past the committed size.
	if cp.Sink.Size != int64(len(want)) || cp.Sink.Limit != cp.Sink.Size {
		t.Fatalf("committed size %d, limit %d", cp.Sink.Size, cp.Sink.Limit)
	}
	// Attaching a new file makes the catch-up pass the limit too.
	late := filepath.Join(dir, "late.jsonl")
	runWithSink(t, db, late, nil)
	if got := readFileOrNil(t, late); !bytes.Equal(got, want) {
		t.Fatalf("late file: %d bytes, want %d", len(got), len(want))
	}
}

// checkpointOf reads the database's checkpoint.
func checkpointOf(t testing.TB, path string) checkpoint {
	t.Helper()
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cp checkpoint
	err = db.View(func(tx *bolt.Tx) error {
		var err error
		cp, _, err = loadCheckpoint(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// editCheckpoint rewrites the database's checkpoint with edit.
func editCheckpoint(t testing.TB, path string, edit func(*checkpoint)) {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		cp, _, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		edit(&cp)
		return cp.save(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestADatabaseWrittenBeforeTheChecksStillWritesItsOutputFile(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(70, 0, 500)
	want := inMemory(t, msgs)
	part := inMemory(t, msgs[:700])
	runWithSink(t, db, out, msgs[:700])
	editCheckpoint(t, db, func(cp *checkpoint) {
		cp.Sink = sinkState{Name: cp.Sink.Name, Format: cp.Sink.Format, Size: cp.Sink.Size, Next: cp.Sink.Next}
		cp.LiveNext = 0
	})
	appendToFile(t, out, want[len(part):len(part)+100]) // an interrupted run's excess
	runWithSink(t, db, out, msgs[700:])
	if got := readFileOrNil(t, out); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
	if cp := checkpointOf(t, db); cp.Sink.V != sinkStateVersion || cp.Sink.TailLen == 0 || cp.Sink.Limit == 0 {
		t.Fatalf("the output file's state was not brought to version %d: %+v", sinkStateVersion, cp.Sink)
	}
}

func TestACommittedSizeThatDoesNotEndALineIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	runWithSink(t, db, out, cleanStream(71, 0, 100))
	// A damaged size in a checkpoint without a checksum of the tail (the
	// checksum would catch it first).
	editCheckpoint(t, db, func(cp *checkpoint) {
		cp.Sink = sinkState{Name: cp.Sink.Name, Format: cp.Sink.Format, Size: cp.Sink.Size - 5, Next: cp.Sink.Next}
	})
	before := readFileOrNil(t, out)
	if p, err := openWithSink(t, db, out, Options{}); !errors.Is(err, ErrSinkChanged) {
		if err == nil {
			p.Close()
		}
		t.Fatalf("got %v, want ErrSinkChanged", err)
	}
	if !bytes.Equal(readFileOrNil(t, out), before) {
		t.Fatal("the file was changed")
	}
}

func TestTornRecordStartsAreTheFormatsOwn(t *testing.T) {
	// Every kind of record an output file holds: a crash may cut any of
	// them after any byte. (Seed 5758380071134848569 of the simulation
	// cut the unbounded progress statement that ends a msgpack stream.)
	records := map[string]cdc.Message{
		"update":                  cdc.NewUpdate([]byte(`{"k":1}`), 5, -1),
		"update with string data": cdc.NewUpdate([]byte(`"s"`), 1<<40, 7),
		"progress":                cdc.NewProgress(3, 9),
		"progress with counts":    cdc.NewProgress(3, 9, cdc.Count{Time: 4, Count: 2}),
		"unbounded progress":      unboundedProgress(9),
		"unbounded progress with count": func() cdc.Message {
			m := unboundedProgress(9)
			m.Progress.Counts = []cdc.Count{{Time: 9, Count: 1}}
			return m
		}(),
	}
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		for name, m := range records {
			rec := appendMessage(t, nil, f, &m)
			for n := 1; n < len(rec); n++ {
				if !tornRecord(rec[:n], f) {
					t.Errorf("%s: %d of the %d bytes of %s (%q) are not taken as torn", f, n, len(rec), name, rec[:n])
					break
				}
			}
		}
		if tornRecord([]byte("hello"), f) {
			t.Errorf("%s: text taken as a torn record", f)
		}
		for _, s := range recordStarts(f) {
			if len(s) < 2 {
				t.Errorf("%s: record starts %q", f, recordStarts(f))
			}
		}
	}
}

func TestTheCheckpointRemembersOnlyTheLatestOutputFiles(t *testing.T) {
	var cp checkpoint
	cp.Sink = sinkState{Next: 1}
	for i := range maxSinkFiles + 5 {
		cp.switchSink(fmt.Sprintf("f%d", i))
		cp.Sink.Name = fmt.Sprintf("f%d", i)
	}
	if len(cp.Files) != maxSinkFiles || cp.Files[0].Name != "f4" || cp.Files[len(cp.Files)-1].Name != fmt.Sprintf("f%d", maxSinkFiles+3) {
		t.Fatalf("%d files, from %s to %s", len(cp.Files), cp.Files[0].Name, cp.Files[len(cp.Files)-1].Name)
	}
	cp.switchSink("f10")
	if cp.Sink.Name != "f10" || len(cp.Files) != maxSinkFiles-1 {
		t.Fatalf("back to f10: current %q, %d others", cp.Sink.Name, len(cp.Files))
	}
	for _, f := range cp.Files {
		if f.Name == "f10" {
			t.Fatal("f10 is both current and among the others")
		}
	}
}

func TestTheExcessOfAnEmptyFileIsCheckedInTheFormatItWasWrittenIn(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out")
	msgs := cleanStream(72, 0, 200)
	// A run writing msgpack is killed before a commit records any of the
	// file's bytes: its first records are past the committed size of 0.
	at := sinkState{Next: 1}
	o := Options{SinkFormat: cdc.Msgpack}
	runWithSinkOptions(t, db, out, msgs, o)
	at = checkpointOf(t, db).Sink
	at.Size, at.Next, at.FileCRC, at.TailLen, at.TailCRC = 0, 1, 0, 0, 0
	at.Chained, at.Frontier, at.Done = true, 0, false
	asLagging(t, db, at)
	msgpack := readFileOrNil(t, out)
	os.Truncate(out, int64(recordLen(t, msgpack, cdc.Msgpack)+3))
	// The next run writes JSON Lines: the msgpack records are cut.
	runWithSink(t, db, out, nil)
	if got, want := readFileOrNil(t, out), inMemory(t, msgs); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
}

// A run killed after writing a batch's output but before its fsync leaves
// committed records past the committed size that may never reach the
// disk; the next run takes them (adoptCommitted) and commits a checkpoint
// that claims them durable. A power loss after that commit must not
// leave the file shorter than the committed size: the records taken are
// fsynced before the checkpoint names them.
func TestAdoptedOutputIsDurableBeforeTheCheckpointClaimsIt(t *testing.T) {
	msgs := cleanStream(66, 0, 300)
	want := inMemory(t, msgs)
	path := dbPath(t)
	sim := &simSink{}
	o := Options{Sink: sim, SinkName: "sim-out", SinkFormat: cdc.JSONL}
	sim.failAfter(lostSync, 0) // killed before the output's first fsync
	p := openTest(t, path, o)
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatalf("append: %v", err)
	}
	p.Close()
	if got := sim.bytes(); !bytes.Equal(got, want) || sim.synced != 0 {
		t.Fatalf("first run left %d bytes, %d synced; want %d, none synced", len(got), sim.synced, len(want))
	}
	sim.reopen()
	sim.fault, sim.failing = noFault, false
	// The rerun has nothing to add: it takes the records the file holds.
	p = openTest(t, path, o)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if at := checkpointOf(t, path).Sink.Size; at != int64(len(want)) {
		t.Fatalf("rerun committed size %d, want %d", at, len(want))
	}
	sim.crash(0) // the power fails: what was not fsynced is lost
	p, err := Open(path, Options{Sink: sim, SinkName: "sim-out", SinkFormat: cdc.JSONL, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("open after the power loss: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := sim.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("after the power loss: %d bytes, want %d", len(got), len(want))
	}
}

func TestAnOutputFileChangedByAnotherProgramWhileOpenIsNotWritten(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, out string)
		want   error
		says   string
	}{
		{"appended to", func(t *testing.T, out string) { appendToFile(t, out, []byte("{\"mine\":1}\n")) },
			ErrSinkExcess, "another program wrote to it"},
		{"cut short", func(t *testing.T, out string) { os.Truncate(out, 0) },
			ErrSinkShort, "another program cut it"},
		{"replaced", func(t *testing.T, out string) {
			b, _ := os.ReadFile(out)
			os.WriteFile(out+".new", b, 0o644)
			os.Rename(out+".new", out)
		}, ErrSinkChanged, "replaced by another file"},
		{"moved away", func(t *testing.T, out string) { os.Rename(out, out+".old") },
			ErrSinkChanged, "moved away or removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
			msgs := cleanStream(5, 0, 200)
			var log bytes.Buffer
			p, err := openWithSink(t, db, out, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			appendAll(t, p, msgs[:100], 100)
			tt.change(t, out)
			before, _ := os.ReadFile(out)
			// The batch commits; its output is not written, and the
			// processor stops.
			p.Append(context.Background(), msgs[100:], nil)
			if err := p.Err(); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("processor error %v, want %v saying %q", err, tt.want, tt.says)
			}
			p.Close()
			if !strings.Contains(log.String(), "another program changed the output file") || strings.Contains(log.String(), "reopen the database") {
				t.Errorf("the log does not say another program changed the file, or says to reopen the database:\n%s", log.String())
			}
			if after, _ := os.ReadFile(out); !bytes.Equal(after, before) {
				t.Errorf("the changed file was written: %d bytes, %d before", len(after), len(before))
			}
		})
	}
}
