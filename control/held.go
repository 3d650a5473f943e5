package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

// A View reads a database's stored state, the same whether the database
// is at rest (*recovery.Reader) or held by a running cdclog and asked
// over its control socket (*Client): what cdclog inspect and replay show.
type View interface {
	Status() (recovery.Status, error)
	ScanPending(fn func(*demangle.PendingTime) error) error
	Records(from uint64, fn func(*recovery.Record) error) error
	WAL(from, to uint64, fn func(*recovery.WALEntry) error) error
	Quarantine(fn func(*recovery.QuarantineRecord) error) error
	OutputEnd() uint64
	OutputStart() uint64
	Consumers() ([]recovery.ConsumerInfo, error)
	Frontier() (uint64, bool)
	WALFloor() uint64
	Close() error
}

// OpenView opens the database at path read-only (a *recovery.Reader);
// when a running cdclog holds it, it asks that process over its control
// socket instead (a *Client). A holder without a socket (an offline
// command such as gc) is waited for, up to timeout (store.NoWait: not at
// all); then the error wraps recovery.ErrLocked, and ErrUnresponsive too
// when a process accepted on the socket but did not answer.
func OpenView(path string, timeout time.Duration) (View, error) {
	r, err := recovery.OpenReader(path, store.NoWait)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, recovery.ErrLocked) {
		return nil, err
	}
	cl, cerr := Dial(path)
	if cerr == nil {
		return cl, nil
	}
	r, err = recovery.OpenReader(path, timeout)
	if err != nil {
		if errors.Is(err, recovery.ErrLocked) && errors.Is(cerr, ErrUnresponsive) {
			// Say who holds it: not a holder without a socket.
			return nil, fmt.Errorf("%w; %w", err, cerr)
		}
		return nil, err
	}
	return r, nil
}

// ErrUnanswered is what a function given to Read returns (wrapped or
// not) when its View's process stopped (ErrGone) before the function gave
// anything: Read then calls it again with the database file. Once
// something was given, the process's going is an error like any other.
var ErrUnanswered = errors.New("the running cdclog stopped before answering")

// Read calls fn with a View of the database at path, as OpenView opens it
// (waiting up to timeout for a holder without a control socket), and
// closes the view, returning fn's error or else Close's. When a running
// cdclog answers, held (unless nil) is called with its Client first. When
// fn returns an error wrapping ErrUnanswered, the holder stopped before
// fn gave anything: fn is called again with the file, opened read-only
// once the holder has let go (recovery.OpenReader, up to timeout). It is
// how cdclog inspect and replay read a database whichever process holds
// it.
func Read(path string, timeout time.Duration, held func(*Client), fn func(View) error) error {
	v, err := OpenView(path, timeout)
	if err != nil {
		return err
	}
	if cl, ok := v.(*Client); ok && held != nil {
		held(cl)
	}
	err = fn(v)
	if errors.Is(err, ErrUnanswered) {
		v.Close()
		if v, err = recovery.OpenReader(path, timeout); err != nil {
			return err
		}
		err = fn(v)
	}
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	return err
}

// GC drops from the database at path what recovery.GC drops, at rest,
// compacting the file unless o.NoCompact. While a running cdclog holds
// the database, that process drops the same online, without compacting
// (its freed pages are reused; run GC again once it has stopped to
// shrink the file), and GC returns who it was; a holder that stops
// meanwhile is waited for, and GC runs at rest. A holder without a
// control socket is waited for up to o.LockTimeout, as recovery.GC does.
func GC(ctx context.Context, path string, o recovery.GCOptions) (recovery.GCResult, *Holder, error) {
	timeout := o.LockTimeout
	o.LockTimeout = store.NoWait
	res, err := recovery.GC(path, o)
	if !errors.Is(err, recovery.ErrLocked) {
		return res, nil, err
	}
	if cl, cerr := Dial(path); cerr == nil {
		defer cl.Close()
		res, err = cl.GC(ctx, o.KeepTimes, o.RetainOutput)
		if !errors.Is(err, ErrGone) {
			return res, &Holder{Info: cl.Info(), Socket: cl.Path()}, err
		}
		// It stopped meanwhile: gc at rest, once it has let go (what it
		// may have dropped already is dropped again at no cost).
	}
	o.LockTimeout = timeout
	res, err = recovery.GC(path, o)
	return res, nil, err
}

// Holder is the running cdclog that answered for a database: who it is,
// and the control socket it answered on.
type Holder struct {
	Info   Info
	Socket string
}

// DeleteConsumer deletes the named consumer from the database at path
// (recovery.DeleteConsumer). While a running cdclog holds the database,
// that process deletes it, and DeleteConsumer returns who it was; a
// holder that stops meanwhile, or one without a control socket, is
// waited for up to timeout, and the consumer deleted at rest.
func DeleteConsumer(ctx context.Context, path, name string, timeout time.Duration) (*Holder, error) {
	err := recovery.DeleteConsumer(path, name, store.NoWait)
	if !errors.Is(err, recovery.ErrLocked) {
		return nil, err
	}
	if cl, cerr := Dial(path); cerr == nil {
		defer cl.Close()
		err = cl.DeleteConsumer(ctx, name)
		if !errors.Is(err, ErrGone) {
			if err != nil {
				return nil, err
			}
			return &Holder{Info: cl.Info(), Socket: cl.Path()}, nil
		}
	}
	return nil, recovery.DeleteConsumer(path, name, timeout)
}
