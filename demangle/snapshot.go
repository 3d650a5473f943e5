package demangle

import (
	"errors"
	"fmt"
	"sort"

	"github.com/cdclog/cdclog/cdc"
	"github.com/vmihailenco/msgpack/v5"
)

// snapshotVersion is the version of the snapshot layout below; a snapshot
// from a newer version is refused rather than misread.
const snapshotVersion = 1

// ErrSnapshot is wrapped by the errors of UnmarshalBinary.
var ErrSnapshot = errors.New("invalid receiver snapshot")

// The snapshot is msgpack (arrays, not maps, to keep it small). Statements
// are stored once and referred to by index.
type snapshot struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Version   int
	Frontier  uint64
	Done      bool
	Stats     Stats
	Spans     [][2]uint64
	Stmts     []snapStmt
	ZeroStmts []int
	Times     []snapTime
}

type snapStmt struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Lower     uint64
	Upper     uint64
	Unbounded bool
	Counts    [][2]uint64
	Pos       snapPos
}

type snapTime struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Time      uint64
	HasCount  bool
	Count     uint64
	CountFrom int
	Updates   []snapUpdate
}

type snapUpdate struct {
	_msgpack struct{} `msgpack:",as_array"`
	Data     []byte
	Diff     int64
	Pos      snapPos
}

type snapPos struct {
	_msgpack struct{} `msgpack:",as_array"`
	Source   string
	Line     int64
	Offset   int64
}

// MarshalBinary returns the receiver's whole state: restoring it with
// UnmarshalBinary gives a receiver that behaves identically. The encoding is
// deterministic for a given state. It refuses while a release is owed
// (Releasing): call Continue until it is done first.
func (r *Receiver) MarshalBinary() ([]byte, error) {
	if r.rel.active {
		return nil, errors.New("encode receiver snapshot: a release is owed (call Continue until Releasing is false)")
	}
	s := snapshot{Version: snapshotVersion, Frontier: r.frontier, Done: r.done, Stats: r.stats}
	for _, sp := range r.cover.spans {
		s.Spans = append(s.Spans, [2]uint64{sp.first, sp.last})
	}
	index := map[*stmt]int{}
	ref := func(st *stmt) int {
		if st == nil {
			return -1
		}
		if i, ok := index[st]; ok {
			return i
		}
		index[st] = len(s.Stmts)
		s.Stmts = append(s.Stmts, encodeStmt(st))
		return index[st]
	}
	zero := r.zeroStmts.statements()
	sort.Slice(zero, func(i, j int) bool { return zero[i].p.Last() < zero[j].p.Last() })
	for _, st := range zero {
		s.ZeroStmts = append(s.ZeroStmts, ref(st))
	}
	for _, pt := range r.Pending() {
		ts := r.times.get(pt.Time)
		st := snapTime{Time: pt.Time, HasCount: ts.hasCount, Count: ts.count, CountFrom: ref(ts.countFrom)}
		for i := range ts.updates {
			h := &ts.updates[i]
			st.Updates = append(st.Updates, snapUpdate{Data: r.arena.data(h), Diff: h.diff, Pos: encodePos(r.arena.pos(h))})
		}
		s.Times = append(s.Times, st)
	}
	b, err := msgpack.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("encode receiver snapshot: %w", err)
	}
	return b, nil
}

// UnmarshalBinary replaces the receiver's state by the one in b, produced by
// MarshalBinary. On error the receiver is unchanged.
func (r *Receiver) UnmarshalBinary(b []byte) error {
	var s snapshot
	if err := cdc.CheckMsgpackBounds(b); err != nil { // else damaged counts can exhaust memory
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if err := msgpack.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if s.Version != snapshotVersion {
		return fmt.Errorf("%w: version %d, this build reads %d", ErrSnapshot, s.Version, snapshotVersion)
	}
	n := Receiver{frontier: s.Frontier, done: s.Done, stats: s.Stats}
	n.times.base = s.Frontier
	stmts := make([]*stmt, len(s.Stmts))
	for i, ss := range s.Stmts {
		st, err := decodeStmt(ss)
		if err != nil {
			return err
		}
		stmts[i] = st
	}
	get := func(i int) (*stmt, error) {
		if i == -1 {
			return nil, nil
		}
		if i < 0 || i >= len(stmts) {
			return nil, fmt.Errorf("%w: statement index %d out of range", ErrSnapshot, i)
		}
		return stmts[i], nil
	}
	if err := n.restoreSpans(s.Spans); err != nil {
		return err
	}
	for _, i := range s.ZeroStmts {
		st, err := get(i)
		if err != nil || st == nil {
			return fmt.Errorf("%w: bad zero-count statement index %d", ErrSnapshot, i)
		}
		n.zeroStmts.push(st)
	}
	for _, st := range s.Times {
		if err := n.restoreTime(st, get); err != nil {
			return err
		}
	}
	*r = n
	return nil
}

func (r *Receiver) restoreSpans(spans [][2]uint64) error {
	for i, sp := range spans {
		if sp[0] > sp[1] || (i > 0 && sp[0] <= spans[i-1][1]+1) {
			return fmt.Errorf("%w: coverage spans out of order at %d", ErrSnapshot, i)
		}
		r.cover.spans = append(r.cover.spans, span{sp[0], sp[1]})
	}
	return nil
}

func (r *Receiver) restoreTime(st snapTime, get func(int) (*stmt, error)) error {
	if st.Time < r.frontier || r.times.get(st.Time) != nil {
		return fmt.Errorf("%w: time %d below the frontier or repeated", ErrSnapshot, st.Time)
	}
	from, err := get(st.CountFrom)
	if err != nil {
		return err
	}
	ts := r.state(st.Time, true)
	ts.hasCount, ts.count, ts.countFrom = st.HasCount, st.Count, from
	if st.HasCount {
		r.countTimes.push(st.Time)
	}
	for _, u := range st.Updates {
		h, pr := ts.find(&r.arena, u.Data)
		if u.Diff == 0 || len(u.Data) == 0 || h != nil {
			return fmt.Errorf("%w: bad update at time %d", ErrSnapshot, st.Time)
		}
		at := decodePos(u.Pos)
		r.bytes += ts.add(&r.arena, u.Data, u.Diff, &at, pr)
		r.held++
	}
	return nil
}

func encodeStmt(st *stmt) snapStmt {
	ss := snapStmt{Lower: st.p.Lower, Upper: st.p.Upper, Unbounded: st.p.Unbounded, Pos: encodePos(st.pos)}
	for _, c := range st.p.Counts {
		ss.Counts = append(ss.Counts, [2]uint64{c.Time, c.Count})
	}
	return ss
}

func decodeStmt(ss snapStmt) (*stmt, error) {
	st := &stmt{p: cdc.Progress{Lower: ss.Lower, Upper: ss.Upper, Unbounded: ss.Unbounded}, pos: decodePos(ss.Pos)}
	for _, c := range ss.Counts {
		st.p.Counts = append(st.p.Counts, cdc.Count{Time: c[0], Count: c[1]})
	}
	m := cdc.Message{Kind: cdc.KindProgress, Progress: st.p}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	return st, nil
}

func encodePos(p cdc.Pos) snapPos { return snapPos{Source: p.Source, Line: p.Line, Offset: p.Offset} }
func decodePos(p snapPos) cdc.Pos { return cdc.Pos{Source: p.Source, Line: p.Line, Offset: p.Offset} }
