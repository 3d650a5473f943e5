package recovery

import (
	"crypto/sha256"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/cdclog/cdclog/cdc"
)

// Input read again (stdin sent twice, a file rewritten in place and read
// from its start) meets its bad messages again. Each is quarantined once:
// a reject equal to one already set aside (same position, bytes and
// reason) is not stored again. The apply goroutine keeps a set of the
// rejects' digests, filled from the quarantine bucket the first time a
// run quarantines anything, and a reject is known by a 128-bit digest of
// its fields, at which size two different rejects do not collide in any
// quarantine that fits on a disk.

// rejectDigest identifies a reject.
type rejectDigest [16]byte

func digestOf(rj *cdc.Reject) rejectDigest {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(n[:0], uint64(len(b))))
		h.Write(b)
	}
	field([]byte(rj.Pos.Source))
	field(binary.BigEndian.AppendUint64(nil, uint64(rj.Pos.Line)))
	field(binary.BigEndian.AppendUint64(nil, uint64(rj.Pos.Offset)))
	field([]byte(rj.Reason))
	field(rj.Raw)
	if rj.Truncated {
		field([]byte{1})
	}
	var d rejectDigest
	copy(d[:], h.Sum(nil))
	return d
}

// quarantinedBefore reports whether rj is already quarantined (stored, or
// set aside by this run), and remembers it otherwise. It is called on the
// apply goroutine.
func (p *Processor) quarantinedBefore(rj *cdc.Reject) (bool, error) {
	if p.quarantined == nil {
		p.quarantined = map[rejectDigest]struct{}{}
		err := p.db.View(func(tx *bolt.Tx) error {
			return scanQuarantine(tx, func(r *QuarantineRecord) error {
				p.quarantined[digestOf(&r.Reject)] = struct{}{}
				return nil
			})
		})
		if err != nil {
			p.quarantined = nil
			return false, err
		}
	}
	d := digestOf(rj)
	if _, ok := p.quarantined[d]; ok {
		return true, nil
	}
	p.quarantined[d] = struct{}{}
	return false, nil
}
