package recovery

import (
	"context"

	"github.com/cdclog/cdclog/cdc"
)

// Source is an input that Processor.Ingest reads: a file, a pipe, a
// partitioned log. Ingest commits the source's position (its cursor) in
// the same transaction as the messages read before it, so that a source
// reopened after a crash resumes just after what was committed. Because
// every statement of the protocol is true forever, a source that cannot
// resume exactly may re-read from an earlier position: what was committed
// already is then dropped as duplicates.
//
// Ingest calls Start once, then Read until it returns an error, then
// Close. Read is called from one goroutine at a time.
type Source interface {
	// Name identifies the input across runs: its cursor is committed
	// under this name. An empty name means the input cannot be resumed
	// (a pipe, stdin): it is read from its start every time.
	Name() string
	// Start prepares the source to read on from cursor, the last value
	// committed under Name (nil when none was, or Name is empty). A
	// source that finds the cursor does not match the input (a replaced
	// file) starts from the beginning and says so in its log; one that
	// cannot honour it (retention deleted unread data) returns an error.
	Start(ctx context.Context, cursor []byte) error
	// Read fills b (which the caller has Reset) with the next messages:
	// at most b.Max, returning as soon as it holds at least one message
	// or reject and no more input is available at once, so that a
	// producer that pauses has its messages committed promptly. It sets
	// b.Cursor to the position just after the last message or reject it
	// put in b. Undecodable input is handled by b.Policy: under Skip and
	// Quarantine it goes into b.Rejects; under Fail, Read returns the
	// *cdc.DecodeError, with b holding the messages before it and
	// b.Cursor just before the bad message.
	//
	// Read returns io.EOF at the end of the input (b may hold the last
	// messages); any other error ends the input after b's messages. When
	// ctx ends it returns what it holds with ctx.Err().
	Read(ctx context.Context, b *SourceBatch) error
	// Close releases the input.
	Close() error
}

// Acknowledger is implemented by a Source that wants to learn when its
// positions are durable (to report them to a broker's consumer group, for
// monitoring). Ingest calls Committed with each batch's cursor after the
// batch's transaction commits, in order.
type Acknowledger interface {
	Committed(cursor []byte)
}

// SourceBatch is what one Source.Read returns: decoded messages with their
// positions, the input it could not decode, and the source's position
// after them. The caller owns it and reuses it once the batch is
// committed; Reset empties it, keeping its buffers.
type SourceBatch struct {
	// Max, MaxBytes and Policy are set by the caller: the most messages
	// (and rejects) Read may put in the batch; about the most input bytes
	// it may read for them (a source stops after the message that reaches
	// it; 0: no limit); and what to do with undecodable input.
	Max      int
	MaxBytes int
	Policy   cdc.ErrorPolicy

	// Msgs are the decoded messages, Pos the position of each.
	Msgs []cdc.Message
	Pos  []cdc.Pos
	// Rejects is input that could not be decoded, under policy Skip or
	// Quarantine.
	Rejects []cdc.Reject
	// Cursor is the source's position after the batch, committed with it
	// under the source's Name; nil leaves the committed cursor as it is.
	Cursor []byte
}

// Len returns the number of messages and rejects in the batch.
func (b *SourceBatch) Len() int { return len(b.Msgs) + len(b.Rejects) }

// Reset empties the batch for another Read, keeping its buffers and its
// Max, MaxBytes and Policy.
func (b *SourceBatch) Reset() {
	clear(b.Rejects) // they hold raw bytes; messages are overwritten before use
	b.Msgs, b.Pos, b.Rejects, b.Cursor = b.Msgs[:0], b.Pos[:0], b.Rejects[:0], nil
}
