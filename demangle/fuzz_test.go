package demangle

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// messagesFromBytes turns fuzz input into messages over a small time range,
// so that collisions, overlaps and violations are common.
func messagesFromBytes(b []byte) []cdc.Message {
	var msgs []cdc.Message
	for len(b) >= 4 {
		op, x, y, z := b[0], uint64(b[1]%16), uint64(b[2]%16), b[3]
		b = b[4:]
		switch op % 4 {
		case 0, 1:
			msgs = append(msgs, cdc.NewUpdate([]byte{'"', 'a' + z%4, '"'}, x, int64(int8(z))|1))
		case 2:
			lo, hi := min(x, y), max(x, y)+1
			var counts []cdc.Count
			for t := lo; t < hi; t++ {
				if c := uint64(z>>(t%8)) & 3; c > 0 {
					counts = append(counts, cdc.Count{Time: t, Count: c})
				}
			}
			msgs = append(msgs, cdc.NewProgress(lo, hi, counts...))
		case 3:
			m := cdc.NewProgress(x, x+1)
			m.Progress.Unbounded = z%2 == 0
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func FuzzReceiver(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 2, 1, 1, 1, 2, 0, 0, 0})
	f.Add(binary.BigEndian.AppendUint64(nil, 0x0203040506070809))
	f.Add([]byte{3, 0, 0, 0, 0, 5, 0, 1, 2, 0, 9, 255, 0, 9, 0, 2, 1, 9, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs := messagesFromBytes(b)
		r := New(0)
		var out []cdc.Message
		for i := range msgs {
			before, _ := r.MarshalBinary()
			n := len(out)
			var err error
			var o Outcome
			out, o, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)})
			if err != nil && o == 0 {
				r.stats.Violations--
				if after, _ := r.MarshalBinary(); string(after) != string(before) || len(out) != n {
					t.Fatalf("rejected %v changed the state", msgs[i])
				}
				r.stats.Violations++
			}
		}
		checkCleanT(t, out)
		snap, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var r2 Receiver
		if err := r2.UnmarshalBinary(snap); err != nil {
			t.Fatalf("restore: %v", err)
		}
	})
}

// FuzzRestore feeds arbitrary bytes to UnmarshalBinary: it must fail
// cleanly or give a receiver that works.
func FuzzRestore(f *testing.F) {
	r := New(3)
	msgs := []cdc.Message{upd(`"a"`, 4, 1), prog(3, 9, 4, 1, 5, 2), upd(`"b"`, 5, 1), unbounded(12)}
	for i := range msgs {
		r.Push(nil, &msgs[i], cdc.Pos{Source: "s", Line: int64(i)})
	}
	snap, _ := r.MarshalBinary()
	f.Add(snap)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Receiver
		if err := r.UnmarshalBinary(b); err != nil {
			return
		}
		for _, m := range messagesFromBytes(b) {
			r.Push(nil, &m, cdc.Pos{})
		}
		r.Stuck()
		r.Pending()
	})
}

// FuzzStoreGivesTheSameOutput: a receiver with a store and a budget of a
// few hundred bytes, shedding whenever it asks to and loading windows of a
// few times, releases byte for byte what a receiver holding everything in
// memory releases, on any stream of fuzz messages (violations included),
// and reports only violations that one reports too.
func FuzzStoreGivesTheSameOutput(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 2, 1, 1, 1, 2, 0, 0, 0}, uint16(300), uint8(1))
	f.Add([]byte{0, 5, 0, 1, 0, 5, 0, 2, 1, 9, 0, 7, 2, 0, 9, 255, 3, 10, 0, 0}, uint16(500), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, budget uint16, window uint8) {
		msgs := messagesFromBytes(b)
		run := func(r *Receiver) ([]byte, map[string]bool) {
			var out []cdc.Message
			seen := map[string]bool{}
			for i := range msgs {
				var err error
				out, _, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)})
				if v, ok := err.(*ViolationError); ok {
					seen[v.Msg.String()+v.At.String()] = true
				} else if err != nil {
					t.Fatal(err)
				}
				for _, v := range r.Deferred() {
					seen[v.Msg.String()+v.At.String()] = true
				}
				if r.NeedShed() {
					if err := r.Shed(); err != nil {
						t.Fatal(err)
					}
				}
			}
			var enc []byte
			for i := range out {
				enc = append(cdc.AppendJSON(enc, &out[i]), '\n')
			}
			return enc, seen
		}
		want, wantSeen := run(New(0))
		r := New(0)
		r.UseStore(&MemStore{}, int64(budget)+1)
		r.window = uint64(window%8) + 1
		got, seen := run(r)
		if !bytes.Equal(got, want) {
			t.Fatalf("with a store:\n%s\nin memory:\n%s", got, want)
		}
		for v := range seen {
			if !wantSeen[v] {
				t.Fatalf("reported %s, which the in-memory receiver does not", v)
			}
		}
	})
}

// checkCleanT is the order check of checkClean for plain tests: progress
// statements tile the time line and updates come in canonical order inside
// the statement that releases them.
func checkCleanT(t *testing.T, out []cdc.Message) {
	var f uint64
	done := false
	var last *cdc.Message
	var held uint64
	for i := range out {
		m := &out[i]
		switch m.Kind {
		case cdc.KindUpdate:
			if done || m.Update.Time < f || (last != nil && compareUpdates(last, m) >= 0) {
				t.Fatalf("update %v out of order (frontier %d)", m, f)
			}
			last = m
			held++
		case cdc.KindProgress:
			var sum uint64
			for _, c := range m.Progress.Counts {
				sum += c.Count
			}
			if done || m.Progress.Lower != f || sum != held {
				t.Fatalf("progress %v at frontier %d with %d updates", m, f, held)
			}
			f, done, last, held = m.Progress.Upper, m.Progress.Unbounded, nil, 0
		}
	}
}

// FuzzDecodeAndPush decodes fuzz input as JSON Lines (and as msgpack) and
// pushes every message into a receiver: no input may panic, a rejected
// message must leave the state unchanged, and the output must be clean.
func FuzzDecodeAndPush(f *testing.F) {
	f.Add([]byte("{\"update\":{\"data\":\"a\",\"time\":1,\"diff\":1}}\n{\"progress\":{\"lower\":0,\"upper\":2,\"counts\":[{\"time\":1,\"count\":1}]}}\n"))
	f.Add([]byte("{\"progress\":{\"time\":0,\"count\":0}}\n{\"update\":{\"data\":{\"b\":1,\"a\":[2]},\"time\":0,\"diff\":-3}}\n"))
	f.Add([]byte("{\"progress\":{\"lower\":[3],\"upper\":[],\"counts\":[]}}\n{\"update\":{\"data\":null,\"time\":9,\"diff\":1}}\n"))
	f.Add([]byte("{\"update\":{\"data\":\"a\",\"time\":1,\"diff\":1}}\n{\"update\":{\"data\":\"a\",\"time\":1,\"diff\":2}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, format := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
			r := cdc.NewReader(bytes.NewReader(b), format, "fuzz")
			recv := New(0)
			var out []cdc.Message
			var m cdc.Message
			for i := 0; i < 10000; i++ {
				err := r.Next(&m)
				if err == io.EOF || cdc.IsFatal(err) {
					break
				}
				if err != nil {
					continue
				}
				n := len(out)
				var o Outcome
				if out, o, err = recv.Push(out, &m, r.Pos()); err != nil && o == 0 && len(out) != n {
					t.Fatalf("rejected %v released output", m)
				}
			}
			checkCleanT(t, out)
		}
	})
}
