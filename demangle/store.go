package demangle

import (
	"iter"

	"github.com/cdclog/cdclog/cdc"
)

// Store keeps, for a Receiver, the messages about times at or beyond its
// horizon (see "Memory" in the package documentation): the receiver
// hands it such a message instead of judging it, and takes it back when
// the frontier comes near its times. The receiver calls a Store from the
// goroutine that calls it, never concurrently. MemStore keeps them in
// memory; the durable processor (package recovery) keeps them in its
// write-ahead log on disk.
type Store interface {
	// Hold keeps h (its data is the caller's: copy what is kept, unless
	// the owner of the receiver says otherwise).
	Hold(h *Held) error
	// Load calls fn, in increasing Seq order (ties in any order), for
	// every message kept and not yet delivered that speaks about a time
	// in [lo, last], that is whose From is at most last and whose last
	// time (Msg.Time()) is at least lo, and counts it as delivered: a
	// message is delivered once, by the first Load whose window it
	// meets. Messages whose last time is below lo may be dropped. The
	// data fn sees is valid during the call only. Load returns more,
	// whether any message is left undelivered, and next, at most the
	// smallest From among them (and above last).
	Load(lo, last uint64, fn func(*Held) error) (next uint64, more bool, err error)
	// Shed tells the store that the receiver has dropped from memory
	// what it held about the times from `from` on: spilled yields it, as
	// messages (each with Seq 0 and From at least from), which the store
	// delivers again, as not delivered yet, before any message it keeps
	// at the same times. A store that keeps every message the receiver
	// accepted (a write-ahead log) may instead deliver those again. It
	// is called only when the receiver has been at the horizon
	// (Load's windows end there) and from is below it.
	Shed(from uint64, spilled iter.Seq[*Held]) error
}

// Held is a message a Store keeps.
type Held struct {
	Msg cdc.Message
	At  cdc.Pos
	// Seq is the message's acceptance number: the receiver numbers the
	// messages it accepts from Receiver.Seq on, in order (the durable
	// processor's WAL arrival numbers). What the receiver hands back to
	// memory after Shed has Seq 0: it is older than anything kept.
	Seq uint64
	// From is the first time at or above the horizon the message speaks
	// about: an update's time, or a statement's lower bound or, when
	// that is below the horizon, the horizon.
	From uint64
}
