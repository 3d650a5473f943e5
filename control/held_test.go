package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

func TestOpenViewReadsTheFileAtRestAndAsksTheProcessThatHoldsIt(t *testing.T) {
	dir := t.TempDir()
	p, s, db := running(t, dir, stream(20))
	v, err := OpenView(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(*Client); !ok {
		t.Fatalf("a held database opened as %T, want the holder's *Client", v)
	}
	if f, _ := v.Frontier(); f != 20 {
		t.Fatalf("frontier %d through the socket, want 20", f)
	}
	v.Close()
	s.Close()
	p.Close()
	v, err = OpenView(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, ok := v.(*recovery.Reader); !ok {
		t.Fatalf("a database at rest opened as %T, want a *recovery.Reader", v)
	}
	if f, _ := v.Frontier(); f != 20 {
		t.Fatalf("frontier %d from the file, want 20", f)
	}
}

func TestOpenViewOfAMissingDatabaseSaysItDoesNotExist(t *testing.T) {
	_, err := OpenView(filepath.Join(t.TempDir(), "none.db"), 0)
	if !errors.Is(err, recovery.ErrNotExist) {
		t.Fatalf("error %v, want recovery.ErrNotExist", err)
	}
}

func TestGCRunsOnlineInTheHolderAndCompactsAtRest(t *testing.T) {
	dir := t.TempDir()
	p, s, db := running(t, dir, stream(200))
	res, held, err := GC(context.Background(), db, recovery.GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if held == nil || held.Info.PID != os.Getpid() || held.Socket == "" || res.Floor != 200 || res.Compacted {
		t.Fatalf("gc of a held database: %+v by %+v, want floor 200 dropped online, not compacted", res, held)
	}
	s.Close()
	p.Close()
	res, held, err = GC(context.Background(), db, recovery.GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if held != nil || !res.Compacted {
		t.Fatalf("gc at rest: %+v by %+v, want compacted here", res, held)
	}
}

func TestDeleteConsumerAsksTheHolderAndDeletesAtRestOtherwise(t *testing.T) {
	p, s, db := running(t, t.TempDir(), stream(10))
	for _, name := range []string{"audit", "billing"} {
		c, err := p.Consumer(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	held, err := DeleteConsumer(context.Background(), db, "audit", 0)
	if err != nil || held == nil || held.Info.PID != os.Getpid() {
		t.Fatalf("delete in the holder: by %+v, %v", held, err)
	}
	if cs, _ := p.Consumers(); len(cs) != 1 || cs[0].Name != "billing" {
		t.Fatalf("consumers after deleting audit: %+v", cs)
	}
	s.Close()
	p.Close()
	if held, err = DeleteConsumer(context.Background(), db, "billing", 0); err != nil || held != nil {
		t.Fatalf("delete at rest: by %+v, %v", held, err)
	}
	r, err := recovery.OpenReader(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if cs, _ := r.Consumers(); len(cs) != 0 {
		t.Fatalf("consumers after deleting billing at rest: %+v", cs)
	}
}

func TestReadAsksTheHolderAndReadsTheFileWhenItStopsBeforeAnswering(t *testing.T) {
	dir := t.TempDir()
	p, s, db := running(t, dir, stream(20))
	var heldBy *Client
	var views []string
	err := Read(db, 0, func(cl *Client) { heldBy = cl }, func(v View) error {
		switch v.(type) {
		case *Client:
			views = append(views, "client")
			s.Close() // the holder stops before this read gave anything
			p.Close()
			return fmt.Errorf("status: %w", ErrUnanswered)
		case *recovery.Reader:
			views = append(views, "file")
			if f, _ := v.Frontier(); f != 20 {
				return fmt.Errorf("frontier %d from the file, want 20", f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if heldBy == nil || heldBy.Info().PID != os.Getpid() || !slices.Equal(views, []string{"client", "file"}) {
		t.Fatalf("held by %v, views %q: want the holder asked, then the file read", heldBy, views)
	}
	// At rest: the file at once, and no holder.
	heldBy, views = nil, nil
	if err := Read(db, 0, func(cl *Client) { heldBy = cl }, func(v View) error {
		if _, ok := v.(*recovery.Reader); !ok {
			return fmt.Errorf("a database at rest read as %T", v)
		}
		return nil
	}); err != nil || heldBy != nil {
		t.Fatalf("Read at rest: %v, held by %v", err, heldBy)
	}
}

func TestReadReturnsTheFunctionsErrorAndTheOpeningsError(t *testing.T) {
	dir := t.TempDir()
	p, s, db := running(t, dir, stream(5))
	s.Close()
	p.Close()
	boom := errors.New("boom")
	if err := Read(db, 0, nil, func(View) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Read = %v, want fn's error", err)
	}
	called := false
	err := Read(filepath.Join(dir, "none.db"), 0, nil, func(View) error { called = true; return nil })
	if !errors.Is(err, recovery.ErrNotExist) || called {
		t.Errorf("Read of a missing database = %v (fn called: %v), want recovery.ErrNotExist", err, called)
	}
}

func TestOpenViewNamesAHolderThatAcceptsButDoesNotAnswer(t *testing.T) {
	dir := t.TempDir()
	_, s, db := running(t, dir, stream(5))
	sock := s.Path()
	s.Close()
	// A holder that is stopped (SIGSTOP) or hung: the socket accepts
	// connections, and nothing answers.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	old := dialTimeout
	dialTimeout = 100 * time.Millisecond
	defer func() { dialTimeout = old }()
	_, err = OpenView(db, store.NoWait)
	if !errors.Is(err, recovery.ErrLocked) || !errors.Is(err, ErrUnresponsive) {
		t.Fatalf("error %v, want recovery.ErrLocked and ErrUnresponsive", err)
	}
	if !strings.Contains(err.Error(), sock) {
		t.Fatalf("error %q does not name the socket %s", err, sock)
	}
}
