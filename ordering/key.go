package ordering

// A Key is what a record is ordered by: its creation time, then its
// sequence number. Records with equal keys are ordered by arrival (see
// Item); the zero Key is the epoch with sequence number 0.
type Key struct {
	CreatedAt Timestamp
	Seq       SeqNum
}

// ParseKey reads a key from created_at text (see ParseTimestamp) and
// sequence number text (see ParseSeqNum). Errors are *KeyError.
func ParseKey(createdAt, seq string) (Key, error) {
	t, err := ParseTimestamp(createdAt)
	if err != nil {
		return Key{}, err
	}
	n, err := ParseSeqNum(seq)
	if err != nil {
		return Key{}, err
	}
	return Key{CreatedAt: t, Seq: n}, nil
}

// Compare returns -1, 0 or +1 as k orders before, with or after l: by
// creation time, then by sequence number.
func (k Key) Compare(l Key) int {
	if c := k.CreatedAt.Compare(l.CreatedAt); c != 0 {
		return c
	}
	return k.Seq.Compare(l.Seq)
}

// String renders k as "created_at/sequence_number", e.g. "1700000000.25/42".
func (k Key) String() string {
	return k.CreatedAt.String() + "/" + k.Seq.String()
}

// An Item is a record with its place in the total order: its Key, then
// Clock, the arrival number its buffer or merger gave it. Clocks strictly
// increase with every push and never repeat within one buffer or merger, so
// no two items of one buffer are ever equal in the order.
type Item[T any] struct {
	Key    Key
	Clock  uint64
	Record T
}

// Before reports whether a orders strictly before b: a smaller key, or an
// equal key and an earlier clock.
func (a Item[T]) Before(b Item[T]) bool {
	if c := a.Key.Compare(b.Key); c != 0 {
		return c < 0
	}
	return a.Clock < b.Clock
}
