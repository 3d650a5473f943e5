package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
)

// Client asks the process holding a database, over its control socket.
// It has the methods of a recovery.Reader that inspect uses, with the
// same meaning: OutputEnd, Frontier and WALFloor as of Dial.
type Client struct {
	path string
	hc   *http.Client
	info Info
}

// ErrNoSocket: nothing answers on the database's control socket (no
// process holds it, or the one that does has no socket: an offline
// command, or a cdclog from before control sockets).
var ErrNoSocket = errors.New("no cdclog answers on the database's control socket")

// ErrUnresponsive: a process accepts connections on the database's control
// socket but did not answer within 5 s (it is stopped, hung, or
// overloaded): it most likely still holds the database.
var ErrUnresponsive = errors.New("the cdclog holding the database accepts on its control socket but does not answer")

// dialTimeout bounds Dial's wait for the holder's answer (a variable
// only so that tests can shorten it).
var dialTimeout = 5 * time.Second

// ErrGone: the process that answered on Dial no longer does (it is
// stopping, or has stopped): the database may be free to open.
var ErrGone = errors.New("the running cdclog stopped answering")

// Dial connects to the control socket of the database at db and asks who
// answers. It fails with ErrNoSocket when nothing does.
func Dial(db string) (*Client, error) {
	path, err := SocketPath(db)
	if err != nil {
		return nil, err
	}
	c := &Client{path: path, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	if err := c.getJSON(ctx, "/v1/info", nil, &c.info); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no answer on %s within %v (is it stopped, e.g. by SIGSTOP, or hung?)", ErrUnresponsive, path, dialTimeout)
		}
		if errors.Is(err, ErrGone) {
			return nil, fmt.Errorf("%w (%s): %v", ErrNoSocket, path, err)
		}
		return nil, err
	}
	return c, nil
}

// Info returns who answered, and the numbers of the last commit at Dial.
func (c *Client) Info() Info { return c.info }

// Path returns the socket's path.
func (c *Client) Path() string { return c.path }

// Close releases the connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// get sends a GET and returns the response if it is 200.
func (c *Client) get(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	return c.do(ctx, http.MethodGet, path, q)
}

// do sends a request and returns the response if it is 200.
func (c *Client) do(ctx context.Context, method, path string, q url.Values) (*http.Response, error) {
	u := "http://cdclog" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGone, err)
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: it is closing its database", ErrGone)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var eb errorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrRemote, eb.Error)
		}
		return nil, fmt.Errorf("%w: %s", ErrRemote, resp.Status)
	}
	return resp, nil
}

func (c *Client) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	resp, err := c.get(ctx, path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	return nil
}

// scan reads a scan's answer, calling fn for each item.
func scan[T any](c *Client, path string, q url.Values, fn func(*T) error) error {
	resp, err := c.get(context.Background(), path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readScan(resp.Body, fn)
}

// Status returns the running processor's status as of its last commit.
func (c *Client) Status() (recovery.Status, error) {
	var st recovery.Status
	err := c.getJSON(context.Background(), "/v1/status", nil, &st)
	return st, err
}

// Pending lists each pending time, as recovery.Reader.Pending.
func (c *Client) Pending() ([]demangle.PendingTime, error) {
	var out []demangle.PendingTime
	err := c.ScanPending(func(p *demangle.PendingTime) error {
		out = append(out, *p)
		return nil
	})
	return out, err
}

// ScanPending calls fn on each pending time as the running process reads
// them (recovery.Reader.ScanPending: a window of times at a time), until
// fn returns an error, which it returns.
func (c *Client) ScanPending(fn func(*demangle.PendingTime) error) error {
	return scan(c, "/v1/pending", nil, fn)
}

// OutputEnd returns the sequence number after the last committed record,
// as of Dial.
func (c *Client) OutputEnd() uint64 { return c.info.OutputEnd }

// OutputStart returns the first record the output log holds, as of Dial.
func (c *Client) OutputStart() uint64 { return max(c.info.OutputStart, 1) }

// Consumers lists the registered consumers, as
// recovery.Processor.Consumers does (with which are open).
func (c *Client) Consumers() ([]recovery.ConsumerInfo, error) {
	out := []recovery.ConsumerInfo{}
	err := scan(c, "/v1/consumers", nil, func(ci *recovery.ConsumerInfo) error {
		out = append(out, *ci)
		return nil
	})
	return out, err
}

// Cursors returns the running processor's committed producer cursors, as
// recovery.Reader.Cursors does offline.
func (c *Client) Cursors() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := c.getJSON(context.Background(), "/v1/cursors", nil, &out)
	return out, err
}

// Frontier returns the committed frontier as of Dial.
func (c *Client) Frontier() (uint64, bool) { return c.info.Frontier, c.info.Complete }

// WALFloor returns the frontier of the last gc, as of Dial.
func (c *Client) WALFloor() uint64 { return c.info.WALFloor }

// Records calls fn for each committed output record from seq from on.
func (c *Client) Records(from uint64, fn func(*recovery.Record) error) error {
	return scan(c, "/v1/records", url.Values{"from": {strconv.FormatUint(from, 10)}}, fn)
}

// WAL calls fn for each logged message whose time lies in [from, to].
func (c *Client) WAL(from, to uint64, fn func(*recovery.WALEntry) error) error {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}, "to": {strconv.FormatUint(to, 10)}}
	return scan(c, "/v1/wal", q, fn)
}

// Quarantine calls fn for each quarantined message, oldest first.
func (c *Client) Quarantine(fn func(*recovery.QuarantineRecord) error) error {
	return scan(c, "/v1/quarantine", nil, fn)
}

// GC asks the running processor to drop, as Processor.GC does, the WAL
// below its frontier (less keepWAL times) and the output that retain
// allows and nothing needs. It does not compact the file.
func (c *Client) GC(ctx context.Context, keepWAL uint64, retain recovery.Retention) (recovery.GCResult, error) {
	var res recovery.GCResult
	q := url.Values{"keep_wal": {strconv.FormatUint(keepWAL, 10)}, "retain": {retain.String()}}
	resp, err := c.do(ctx, http.MethodPost, "/v1/gc", q)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return res, fmt.Errorf("read the answer: %w", err)
	}
	return res, nil
}

// DeleteConsumer asks the running processor to delete the named
// consumer (Processor.DeleteConsumer).
func (c *Client) DeleteConsumer(ctx context.Context, name string) error {
	resp, err := c.do(ctx, http.MethodPost, "/v1/consumers/delete", url.Values{"name": {name}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
