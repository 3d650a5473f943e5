package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// statusView is what inspect status shows: the database's status and
// the broker positions among its cursors (its JSON has the fields of
// both: "inputs" and "sinks" besides the status's).
type statusView struct {
	recovery.Status
	relay.Positions
}

// MarshalJSON writes the status's fields (recovery.Status has its own
// encoding, which embedding would make the whole of it) and then
// "inputs" and "sinks".
func (v statusView) MarshalJSON() ([]byte, error) {
	st, err := json.Marshal(&v.Status)
	if err != nil {
		return nil, err
	}
	pos, err := json.Marshal(v.Positions)
	if err != nil {
		return nil, err
	}
	if len(st) < 2 || st[len(st)-1] != '}' || len(pos) < 2 || pos[0] != '{' {
		return nil, fmt.Errorf("inspect status: cannot join %q and %q", st, pos)
	}
	if string(st) == "{}" {
		return pos, nil
	}
	return append(append(st[:len(st)-1], ','), pos[1:]...), nil
}

// readStatusView reads the status and decodes the broker positions; a
// cursor that cannot be decoded is left out, with a warning.
func readStatusView(e *env, r control.View) (*statusView, error) {
	s, err := r.Status()
	if err != nil {
		return nil, err
	}
	cursors, err := readCursors(r)
	if err != nil {
		return nil, err
	}
	pos, err := relay.Describe(cursors, s.OutputRecords)
	if err != nil {
		e.log.Warn("inspect status: broker positions left out", "err", err)
	}
	return &statusView{Status: s, Positions: pos}, nil
}

// readCursors returns the committed cursors: from the file
// (recovery.Reader) or from the running process that holds it
// (control.Client).
func readCursors(r control.View) (map[string][]byte, error) {
	switch c := r.(type) {
	case interface{ Cursors() map[string][]byte }:
		return c.Cursors(), nil
	case interface {
		Cursors() (map[string][]byte, error)
	}:
		return c.Cursors()
	}
	return nil, nil
}

// addBrokerRows adds a line for each broker input partition and each
// sink; none when the database has none.
func addBrokerRows(kv *keyValues, pos *relay.Positions) {
	for _, in := range pos.Inputs {
		key, what := "input "+in.Input, "next sequence"
		if in.Partition != nil {
			key, what = key+"/"+strconv.Itoa(int(*in.Partition)), "next offset"
		}
		v := fmt.Sprintf("%s %d", what, in.Next)
		switch {
		case in.LeaderEpoch != nil:
			v += fmt.Sprintf(", leader epoch %d", *in.LeaderEpoch)
		case in.StreamCreated != "":
			v += ", stream created " + in.StreamCreated
		}
		if in.LogEnd != nil {
			v += fmt.Sprintf("; log end %d, lag %d, as seen at %s", *in.LogEnd, *in.Lag, in.LogEndSeenAt)
		} else {
			v += "; log end not known offline (none recorded)"
		}
		kv.add(key, v)
	}
	for _, s := range pos.Sinks {
		kv.add("sink "+s.Output, fmt.Sprintf("record %d acknowledged by the output at %s, lag %d; sink id %s",
			s.Acked, orNone(s.RecordedAt), s.Lag, s.SinkID))
	}
}
