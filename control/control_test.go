package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// stream is times 0..n-1 with one update each, their progress, and a
// pending time n with an update and no progress.
func stream(n int) []cdc.Message {
	var msgs []cdc.Message
	for t := range uint64(n) {
		msgs = append(msgs, cdc.NewUpdate([]byte(fmt.Sprintf(`"k%d"`, t)), t, 1),
			cdc.NewProgress(t, t+1, cdc.Count{Time: t, Count: 1}))
	}
	return append(msgs, cdc.NewUpdate([]byte(`"late"`), uint64(n), 1))
}

// running opens a processor at a database in dir, holding msgs, with its
// control socket.
func running(t *testing.T, dir string, msgs []cdc.Message) (*recovery.Processor, *Server, string) {
	t.Helper()
	db := filepath.Join(dir, "state.db")
	p, err := recovery.Open(db, recovery.Options{Logger: quiet(), OnError: cdc.Quarantine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatal(err)
	}
	s, err := Listen(db, p, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return p, s, db
}

func TestAClientSeesWhatTheProcessorsReaderSees(t *testing.T) {
	p, _, db := running(t, t.TempDir(), stream(50))
	c, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := p.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c.Info().PID != os.Getpid() || c.OutputEnd() != r.OutputEnd() || c.WALFloor() != r.WALFloor() {
		t.Fatalf("info %+v, reader output end %d", c.Info(), r.OutputEnd())
	}
	if f, done := c.Frontier(); f != 50 || done {
		t.Fatalf("frontier %d, %v", f, done)
	}
	got, err := c.Status()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.Status()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("status\n got %+v\nwant %+v", got, want)
	}
	gp, err := c.Pending()
	wp, _ := r.Pending()
	if err != nil || !reflect.DeepEqual(gp, wp) || len(gp) != 1 {
		t.Fatalf("pending %+v, %v; want %+v", gp, err, wp)
	}
	var gotRecs, wantRecs []recovery.Record
	c.Records(10, func(rec *recovery.Record) error { gotRecs = append(gotRecs, *rec); return nil })
	r.Records(10, func(rec *recovery.Record) error {
		rec.Msg.Update.Data = append([]byte(nil), rec.Msg.Update.Data...)
		wantRecs = append(wantRecs, *rec)
		return nil
	})
	if len(wantRecs) == 0 || !reflect.DeepEqual(gotRecs, wantRecs) {
		t.Fatalf("records from 10: %d, want %d", len(gotRecs), len(wantRecs))
	}
	var gotWAL, wantWAL []recovery.WALEntry
	c.WAL(5, 7, func(e *recovery.WALEntry) error { gotWAL = append(gotWAL, *e); return nil })
	r.WAL(5, 7, func(e *recovery.WALEntry) error {
		e.Msg.Update.Data = append([]byte(nil), e.Msg.Update.Data...)
		wantWAL = append(wantWAL, *e)
		return nil
	})
	if len(wantWAL) == 0 || !reflect.DeepEqual(gotWAL, wantWAL) {
		t.Fatalf("WAL 5-7: %+v, want %+v", gotWAL, wantWAL)
	}
}

func TestAScanStoppedByTheClientEndsCleanly(t *testing.T) {
	_, _, db := running(t, t.TempDir(), stream(3000))
	c, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	n := 0
	err = c.Records(1, func(*recovery.Record) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("%v", err)
	}
	// The server is still fine.
	if _, err := c.Status(); err != nil {
		t.Fatal(err)
	}
}

func TestTheSocketIsTheOwnersOnlyAndGoneAfterClose(t *testing.T) {
	_, s, db := running(t, t.TempDir(), stream(1))
	fi, err := os.Lstat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v", fi.Mode())
	}
	if s.Path() != db+".sock" {
		t.Fatalf("socket at %s", s.Path())
	}
	s.Close()
	if _, err := os.Lstat(s.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	if _, err := Dial(db); !errors.Is(err, ErrNoSocket) {
		t.Fatalf("Dial after Close: %v", err)
	}
	// A second Close, as a deferred one after the explicit one, and a nil
	// Server's do nothing.
	again, err := Listen(db, nil, nil) // a new socket at the same path
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := os.Lstat(again.Path()); err != nil {
		t.Fatalf("a second Close of the old server removed the new socket: %v", err)
	}
	if err := (*Server)(nil).Close(); err != nil {
		t.Fatalf("a nil Server's Close: %v", err)
	}
}

func TestAStaleSocketIsReplacedAndALiveOneIsNot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	// A socket a killed process left: nothing listens.
	ln, err := net.Listen("unix", db+".sock")
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	p, s, _ := running(t, dir, stream(1))
	if _, err := Dial(db); err != nil {
		t.Fatalf("the stale socket was not replaced: %v", err)
	}
	if _, err := Listen(db, p, quiet()); !errors.Is(err, ErrInUse) {
		t.Fatalf("a second Listen: %v", err)
	}
	s.Close()
}

func TestALongDatabasePathGetsASocketItCanHold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, s, db := running(t, dir, stream(2))
	if len(s.Path()) > maxSocketPath || strings.HasPrefix(s.Path(), dir) {
		t.Fatalf("socket at %s", s.Path())
	}
	c, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Status(); err != nil || st.Path != db {
		t.Fatalf("%+v, %v", st.Path, err)
	}
}

func TestAClosedProcessorAnswersUnavailable(t *testing.T) {
	p, _, db := running(t, t.TempDir(), stream(2))
	c, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := c.Status(); !errors.Is(err, ErrGone) {
		t.Fatalf("status of a closed processor: %v", err)
	}
}

func TestAClientListsTheConsumersAndWhereTheOutputLogStarts(t *testing.T) {
	p, _, db := running(t, t.TempDir(), stream(400))
	ctx := context.Background()
	a, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Commit(ctx, 9); err != nil {
		t.Fatal(err)
	}
	b, err := p.Consumer("b")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx, 300); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := p.GC(ctx, recovery.GCOptions{RetainOutput: recovery.RetainRecords(0)}); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want, _ := p.Consumers()
	got, err := c.Consumers()
	if err != nil || !reflect.DeepEqual(got, want) || len(got) != 2 || !got[0].Open || got[1].Open {
		t.Fatalf("consumers %+v, %v; want %+v (a open, b closed)", got, err, want)
	}
	if c.OutputStart() != p.OutputStart() {
		t.Fatalf("output start %d, the processor's %d", c.OutputStart(), p.OutputStart())
	}
}

func TestGCAndConsumerDeletionRunInTheProcessThatHoldsTheDatabase(t *testing.T) {
	p, _, db := running(t, t.TempDir(), stream(500))
	c, err := p.Consumer("audit")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(context.Background(), 400); err != nil {
		t.Fatal(err)
	}
	cl, err := Dial(db)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.GC(context.Background(), 0, recovery.RetainRecords(0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Floor != 500 || res.Compacted {
		t.Fatalf("gc over the socket: %+v", res)
	}
	if err := cl.DeleteConsumer(context.Background(), "audit"); !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "open") {
		t.Fatalf("deleting an open consumer: %v", err)
	}
	c.Close()
	if err := cl.DeleteConsumer(context.Background(), "audit"); err != nil {
		t.Fatal(err)
	}
	if cs, _ := p.Consumers(); len(cs) != 0 {
		t.Fatalf("consumers after delete: %+v", cs)
	}
}
