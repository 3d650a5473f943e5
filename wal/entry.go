package wal

// Entry is one logged message.
type Entry struct {
	// Time is the time the message is filed under (for a progress
	// statement, the last time it covers).
	Time uint64
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
