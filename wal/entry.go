package wal

// Entry is one logged message.
type Entry struct {
	// Time is the time the message is filed under (for a progress
	// statement, the last time it covers).
	Time uint64
	// Span is how many times before Time the message also speaks about
	// (for a progress statement, Time less its lower bound): the index
	// record of a chunk keeps the smallest Time - Span of its entries
	// (ChunkInfo.First). It is not stored with the entry, and reads
	// return it as 0.
	Span uint64
	// Arrival is the message's place in the order of acceptance; it is
	// unique and increases across batches.
	Arrival uint64
	// Source, Line and Offset say where the message came from; Source is an
	// index into names the caller keeps.
	Source uint64
	Line   uint64
	Offset uint64
	// Body is the encoded message. Entries returned by scans alias the
	// database's memory: valid only inside the transaction.
	Body []byte
}
