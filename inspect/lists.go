package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
)

// PendingLine is one line of Pending's JSON. A time, and the count a
// progress statement gives it, may exceed 2^53: they are strings
// (docs/inspect.md).
type PendingLine struct {
	Time     uint64  `json:"time,string"`
	Expected *uint64 `json:"expected,string"`
	Held     int     `json:"held"`
}

// Pending writes each pending time of r, in time order: its expected
// update count ("unknown" until a progress statement gives it), the
// distinct updates held and how many are missing; or a line saying there
// is none, and where the frontier is.
func Pending(w io.Writer, r control.View, o Options) error {
	return show(w, r, view[demangle.PendingTime]{
		what: "read pending times",
		scan: func(r control.View, yield func(*demangle.PendingTime) error) error {
			return r.ScanPending(yield)
		},
		json: func(p *demangle.PendingTime) any {
			line := PendingLine{Time: p.Time, Held: p.Held}
			if p.Known {
				line.Expected = &p.Expected
			}
			return &line
		},
		header: []string{"TIME", "EXPECTED", "HELD", "MISSING"},
		row: func(p *demangle.PendingTime) []string {
			expected, missing := "unknown", "?"
			if p.Known {
				expected = u64(p.Expected)
				missing = "0"
				if held := uint64(p.Held); held < p.Expected { // any 64-bit count: no int64 arithmetic
					missing = u64(p.Expected - held)
				}
			}
			return []string{u64(p.Time), expected, fmt.Sprint(p.Held), missing}
		},
		empty: func(r control.View) string {
			f, complete := r.Frontier()
			return fmt.Sprintf("no pending times (%s)", frontierText(f, complete))
		},
	}, o)
}

// WALLine is one line of WAL's JSON. The filing time may exceed 2^53: it
// is a string (docs/inspect.md).
type WALLine struct {
	Time    uint64          `json:"time,string"`
	Arrival uint64          `json:"arrival"`
	Source  string          `json:"source"`
	Line    int64           `json:"line"`
	Offset  int64           `json:"offset"`
	Message json.RawMessage `json:"message"`
}

// WAL writes the messages of r's write-ahead log filed at times from to
// to (both included), in the log's order: filing time, arrival number,
// where the message was read, and the message.
func WAL(w io.Writer, r control.View, from, to uint64, o Options) error {
	var buf []byte
	return show(w, r, view[recovery.WALEntry]{
		what: "read WAL",
		scan: func(r control.View, yield func(*recovery.WALEntry) error) error {
			return r.WAL(from, to, yield)
		},
		json: func(we *recovery.WALEntry) any {
			buf = cdc.AppendJSON(buf[:0], &we.Msg)
			return &WALLine{Time: we.Time, Arrival: we.Arrival, Source: we.Pos.Source,
				Line: we.Pos.Line, Offset: we.Pos.Offset, Message: buf}
		},
		header: []string{"TIME", "ARRIVAL", "POSITION", "MESSAGE"},
		row: func(we *recovery.WALEntry) []string {
			return []string{u64(we.Time), u64(we.Arrival), we.Pos.String(), we.Msg.String()}
		},
		empty: func(r control.View) string {
			if floor := r.WALFloor(); floor > from {
				return fmt.Sprintf("no WAL entries in the time range (gc dropped the WAL below time %d)", floor)
			}
			return "no WAL entries in the time range"
		},
	}, o)
}

// OutputLine is one line of Output's JSON.
type OutputLine struct {
	Seq     uint64          `json:"seq"`
	Message json.RawMessage `json:"message"`
}

// Output writes r's committed output records from sequence number from
// on, each with its number.
func Output(w io.Writer, r control.View, from uint64, o Options) error {
	var buf []byte
	return show(w, r, view[recovery.Record]{
		what: "read output log",
		scan: func(r control.View, yield func(*recovery.Record) error) error {
			return r.Records(from, yield)
		},
		json: func(rec *recovery.Record) any {
			buf = cdc.AppendJSON(buf[:0], &rec.Msg)
			return &OutputLine{Seq: rec.Seq, Message: buf}
		},
		header: []string{"SEQ", "MESSAGE"},
		row:    func(rec *recovery.Record) []string { return []string{u64(rec.Seq), rec.Msg.String()} },
		empty:  func(control.View) string { return "no output records from this sequence number on" },
	}, o)
}

// QuarantineLine is one line of Quarantine's JSON: the reject as in a
// quarantine file, with its number and when it was set aside.
type QuarantineLine struct {
	Seq uint64 `json:"seq"`
	cdc.RejectLine
	Time string `json:"time"`
}

// Quarantine writes the input r's processor set aside under
// cdc.Quarantine, oldest first: where each was read, why it was
// rejected, and its raw bytes (quoted and shortened in the text).
func Quarantine(w io.Writer, r control.View, o Options) error {
	return show(w, r, view[recovery.QuarantineRecord]{
		what: "read quarantine",
		scan: func(r control.View, yield func(*recovery.QuarantineRecord) error) error {
			return r.Quarantine(yield)
		},
		json: func(q *recovery.QuarantineRecord) any {
			return &QuarantineLine{Seq: q.Seq, RejectLine: q.QuarantineLine(), Time: q.Time.Format(time.RFC3339Nano)}
		},
		header: []string{"SEQ", "POSITION", "REASON", "RAW"},
		row: func(q *recovery.QuarantineRecord) []string {
			return []string{u64(q.Seq), q.Pos.String(), q.Reason, rawText(q.Raw, 60)}
		},
		empty: func(control.View) string { return "no quarantined messages" },
	}, o)
}

// Consumers writes r's registered consumers by name: the record each
// reads next, its lag, and whether a running processor has it open.
func Consumers(w io.Writer, r control.View, o Options) error {
	return show(w, r, view[recovery.ConsumerInfo]{
		what: "read consumers",
		scan: func(r control.View, yield func(*recovery.ConsumerInfo) error) error {
			return each(r.Consumers, yield)
		},
		json:   func(ci *recovery.ConsumerInfo) any { return ci },
		header: []string{"NAME", "NEXT", "LAG", "OPEN"},
		row: func(ci *recovery.ConsumerInfo) []string {
			return []string{ci.Name, u64(ci.Next), u64(ci.Lag), yesNo(ci.Open)}
		},
		empty: func(control.View) string { return "no consumers" },
	}, o)
}
