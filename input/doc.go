// Package input provides the sources that recovery.Processor.Ingest reads:
// files, which resume where the last commit left them and can be followed
// as they grow, and streams (stdin, pipes, devices), which cannot.
//
// # Files
//
// A regular file (OpenFile) is read from where its committed cursor says,
// when the cursor still describes the file: the cursor holds the offset and
// line reached, a CRC-32C of the file's first bytes (up to 64 KiB, no
// further than the offset) and one of the 4 KiB before the offset. A file
// whose bytes differ there (replaced, rewritten, cut) is read from its
// start instead, and what was committed already is dropped as duplicates,
// which is always harmless: every statement of the protocol is true
// forever. The bytes between those two ranges are not compared, so that a
// rerun need not read again what was ingested: a file edited in place in
// the middle only, at the same length, is taken for the one read, and the
// edit is not seen. Give an edited file under a new name, or a new
// database, to have it read again.
//
// A file may still be being written. Its last line, when it has no line end
// and its JSON is cut short (or a msgpack message cut short), is not
// consumed: the cursor stops before it, and the next run, or the same run
// when following, reads it once it is complete. A last line without a line
// end whose JSON is whole is consumed: a message, or a bad line reported
// under the error policy as any other (no prefix of a JSON object is a
// JSON value, so it cannot be a message still being written).
//
// Following (FileOptions.Follow) reads a file as it grows, like tail -F:
// at its end the source waits for more, and it notices a file that was
// replaced at its path (rotated: read to its end, then the new file from
// its start) or cut short (copied and truncated: read again from its
// start; also when written again past what was read before the source
// looked, which the last bytes read, no longer where they were, tell).
// A followed path with no file yet (nor, perhaps, its directory) is
// waited for, as tail -F does: the log says so once, and the file is read
// from its start when it appears (or resumed at its cursor, if it is the
// file the cursor describes). Without Follow a missing file is an error.
// On Linux, inotify wakes the source as soon as the file it reads is
// written, or a file is created or moved to the path (the latency of a
// pipe, not of a poll); the path is also polled (FileOptions.Poll), on
// every system, which is all there is elsewhere, on file systems that
// report no change (NFS written from another host), and if inotify fails
// (no instance or watch left): a file that was at the path for
// less than a poll, between two rotations, may never be opened, as with
// tail -F. A file rotated while no process was following it has its unread
// tail left unread: the cursor then finds another file at the path.
//
// # Streams
//
// A stream (NewStream) is read by a goroutine of its own, so that the
// source knows when no input is available at once: a batch is handed over
// as soon as the producer pauses, and a producer that writes a message
// every 50 ms sees each committed within the processor's batch delay. When
// Ingest is stopped (its context ends) the source hands over every byte it
// has taken from the stream, decoded, before it ends: nothing read is lost.
// A message the producer was in the middle of writing is then incomplete:
// it is not ingested, and the source says so in its log. The goroutine
// starts with the stream's first Read, so that two streams over one input
// (stdin, or one named pipe, given twice) read it in turn: the second
// finds the end the first read to.
package input
