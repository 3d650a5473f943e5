// Package clean turns a CDC stream that may be duplicated and reordered
// into the clean stream, in memory, with no database: what `cdclog
// demangle` does, usable from Go. Stream decodes the input with a
// cdc.Reader, pushes every message through a demangle.Receiver, applies
// the on-error policy to what cannot be decoded and to what the receiver
// rejects, and writes what the receiver releases with a cdc.Writer.
//
// Convert is the same kind of pass for `cdclog convert`: a naive stream
// (updates, and finish messages that close every time up to theirs) in,
// the CDC stream out, consolidated.
//
// Package demangle is the receiver itself, a state machine with no I/O;
// clean is the loop around it for a stream read once, from start to end.
// The durable processor (package recovery) runs the same receiver with
// the same policy over a write-ahead log instead, so that a crash loses
// nothing: the clean stream of one input is the same from either.
//
// # Pipeline
//
// Three goroutines share the work: one decodes the input into batches of
// BatchSize messages, the caller's pushes them through the receiver, and
// one encodes and writes the released messages. Buffers go round (input
// batches back to the decoder, output slices back to the receiver's
// goroutine), so that a steady stream allocates little beyond what the
// receiver holds.
//
// # Memory
//
// What is pending (held for times that are not complete yet) is in
// memory. Past Options.Budget the receiver keeps what lies beyond its
// horizon compactly, as it arrived, in a demangle.MemStore, to be judged
// when the frontier comes near (see "Memory and the horizon" in package
// demangle): the output is byte for byte the same for any budget. Memory
// still grows with what is pending; Options.MaxMemory bounds it, and
// Stream stops with a *MemoryError once the heap passes it. A pending
// state larger than memory needs the durable processor, which keeps it on
// disk.
package clean
