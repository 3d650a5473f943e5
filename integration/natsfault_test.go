package integration

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// commitHeader is how a batch's commit shows on the wire (nats.go writes
// headers as "Key: Value\r\n").
var commitHeader = []byte("Nats-Batch-Commit: 1\r\n")

// commitFault is what a faultDialer does to the connection that sends
// the commit it waits for.
type commitFault int

const (
	// cutBefore closes the connection instead of sending the write that
	// holds the commit: the batch never commits.
	cutBefore commitFault = iota
	// deafAfter sends the commit, then drops everything the server sends
	// (its acknowledgement) and closes the connection 300 ms later: the
	// batch commits, and the writer never learns it.
	deafAfter
	// beforeWrite runs the dialer's hook, then sends the commit.
	beforeWrite
)

// faultDialer is a nats.CustomDialer whose connections watch what the
// client writes for the commits of atomic batches, and apply fault to
// the one that sends the at-th commit (counted from 1 over every
// connection).
type faultDialer struct {
	at    int
	fault commitFault
	hook  func() // for beforeWrite

	mu      sync.Mutex
	commits int
	fired   atomic.Bool
}

func (d *faultDialer) option() nats.Option { return nats.SetCustomDialer(d) }

// Dial connects as net.Dial does, through a watching connection.
func (d *faultDialer) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: c, d: d}, nil
}

// seen counts the commits in a write and reports whether it holds the
// awaited one.
func (d *faultDialer) seen(n int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	before := d.commits
	d.commits += n
	return before < d.at && d.commits >= d.at
}

type faultConn struct {
	net.Conn
	d    *faultDialer
	tail []byte // the end of the previous write, for a header cut in two
	deaf atomic.Bool
}

var errCut = errors.New("connection cut by the test")

func (c *faultConn) Write(b []byte) (int, error) {
	window := append(c.tail, b...)
	n := bytes.Count(window, commitHeader)
	c.tail = append(c.tail[:0], window[max(0, len(window)-len(commitHeader)+1):]...)
	if n == 0 || !c.d.seen(n) {
		return c.Conn.Write(b)
	}
	c.d.fired.Store(true)
	switch c.d.fault {
	case cutBefore:
		c.Conn.Close()
		return 0, errCut
	case deafAfter:
		c.deaf.Store(true)
		time.AfterFunc(300*time.Millisecond, func() { c.Conn.Close() })
	case beforeWrite:
		c.d.hook()
	}
	return c.Conn.Write(b)
}

// Read drops what the server sends once the connection is deaf.
func (c *faultConn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if err != nil || !c.deaf.Load() {
			return n, err
		}
	}
}

// logBuffer is a logger whose lines a test can search (copied to stderr
// under CDCLOG_TEST_LOG=1).
func logBuffer() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	var w io.Writer = b
	if os.Getenv("CDCLOG_TEST_LOG") != "" {
		w = io.MultiWriter(b, os.Stderr)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
