package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// Status writes where the stream of r stands and why its frontier does
// not move (ReadStatus): "key: value" lines, or one JSON object.
func Status(w io.Writer, r control.View, o Options) error {
	return show(w, r, view[StatusView]{
		what: "read status",
		scan: func(r control.View, yield func(*StatusView) error) error {
			s, err := ReadStatus(r, o.log())
			if err != nil {
				return err
			}
			return yield(s)
		},
		json:   func(s *StatusView) any { return s },
		object: true,
		text:   writeStatusText,
	}, o)
}

// writeStatusText prints a status as aligned "key: value" lines.
func writeStatusText(w io.Writer, v *StatusView) error {
	s := &v.Status
	var kv keyValues
	kv.add("database", s.Path)
	kv.add("schema version", u64(s.SchemaVersion))
	kv.add("created", orNone(s.Created))
	if s.Complete {
		kv.add("frontier", "complete: every time has been emitted")
	} else {
		kv.add("frontier", u64(s.Frontier))
	}
	if s.FirstIncompleteTime != nil {
		kv.add("first incomplete time", u64(*s.FirstIncompleteTime))
	} else {
		kv.add("first incomplete time", "none")
	}
	kv.add("why incomplete", s.Reason)
	kv.add("pending times", strconv.Itoa(s.PendingTimes))
	kv.add("pending updates", strconv.Itoa(s.PendingUpdates))
	if s.MemoryHorizon != nil {
		kv.add("pending on disk", fmt.Sprintf("%d messages from time %s on, not deduplicated yet", s.PendingOnDisk, u64(*s.MemoryHorizon)))
	}
	kv.add("accepted updates", u64(s.AcceptedUpdates))
	kv.add("accepted progress", u64(s.AcceptedProgress))
	kv.add("duplicates dropped", u64(s.Duplicates))
	kv.add("stale dropped", u64(s.Stale)+" (below the frontier)")
	kv.add("violations", u64(s.Violations))
	kv.add("skipped", u64(s.Skipped))
	kv.add("quarantined", u64(s.Quarantined))
	writeWALStatus(&kv, &s.WAL)
	kv.add("output records", u64(s.OutputRecords))
	if s.OutputFrom > 1 {
		kv.add("output kept from", u64(s.OutputFrom)+" (gc's retention dropped the records before it)")
	} else {
		kv.add("output kept from", "1 (gc has dropped no output)")
	}
	kv.add("emitted updates", u64(s.EmittedUpdates))
	kv.add("emitted times", u64(s.EmittedTimes))
	if s.OutputFile != "" {
		kv.add("output file", s.OutputFile)
		kv.add("output file size", humanBytes(s.OutputFileBytes))
	} else {
		kv.add("output file", "none (records went to stdout; 'cdclog replay' re-sends them)")
	}
	if len(s.Consumers) == 0 {
		kv.add("consumers", "none")
	}
	for _, ci := range s.Consumers {
		kv.add("consumer "+ci.Name, fmt.Sprintf("next record %d, lag %d", ci.Next, ci.Lag))
	}
	addBrokerRows(&kv, &v.Positions)
	kv.add("last checkpoint", orNone(s.LastCheckpoint))
	kv.add("file size", humanBytes(s.FileBytes))
	return kv.write(w)
}

func writeWALStatus(kv *keyValues, ws *recovery.WALStatus) {
	kv.add("wal entries", u64(ws.Entries))
	kv.add("wal chunks", strconv.Itoa(ws.Chunks))
	kv.add("wal size", humanBytes(ws.Bytes))
	if ws.MinTime != nil && ws.MaxTime != nil {
		kv.add("wal time range", fmt.Sprintf("%d to %d", *ws.MinTime, *ws.MaxTime))
	} else {
		kv.add("wal time range", "empty")
	}
	if ws.Floor == 0 {
		kv.add("wal floor", "0 (gc has dropped nothing)")
	} else {
		kv.add("wal floor", u64(ws.Floor)+" (gc dropped the WAL below it)")
	}
}

// StatusView is what Status shows: the database's status and the broker
// positions among its cursors. Its JSON has the fields of both: "inputs"
// and "sinks" after the status's.
type StatusView struct {
	recovery.Status
	relay.Positions
}

// MarshalJSON writes the status's fields (recovery.Status has its own
// encoding, which embedding would make the whole of it) and then
// "inputs" and "sinks".
func (v StatusView) MarshalJSON() ([]byte, error) {
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

// StatusSource is what ReadStatus reads: a control.View, or the running
// *recovery.Processor itself (cdclog serve's /v1/status). The broker
// positions come from its Cursors method, when it has one.
type StatusSource interface {
	Status() (recovery.Status, error)
}

// ReadStatus reads the status of r and decodes the broker positions among
// its cursors; when they cannot be decoded they are left out, with a
// warning on log.
func ReadStatus(r StatusSource, log *slog.Logger) (*StatusView, error) {
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
		log.Warn("inspect status: broker positions left out", "err", err)
	}
	return &StatusView{Status: s, Positions: pos}, nil
}

// readCursors returns the committed cursors: from the file
// (recovery.Reader) or from the running process that holds it
// (control.Client).
func readCursors(r StatusSource) (map[string][]byte, error) {
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
