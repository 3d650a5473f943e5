// Package control lets a process ask a running cdclog about its database.
//
// A database is locked by the process that writes it (cdclog ingest,
// serve), so another process cannot open it, not even to read. The
// writing process therefore listens on a control socket next to the
// database (Listen): a Unix socket at PATH.sock, or, when that path is too
// long for a socket address, at a name derived from it in a directory of
// the user's under the system's temporary directory (SocketPath). The
// socket is the owner's only (mode 0600, created under a temporary name and
// renamed into place), and its questions are read-only: the same views
// that a recovery.Reader gives of a database at rest (status, pending
// times, WAL, output records, quarantine, consumers), as of the last commit, so that
// cdclog inspect answers the same way whether the database is at rest or
// held (Dial gives a Client with Reader's methods).
//
// OpenView, Read, GC and DeleteConsumer (held.go) are what cdclog
// inspect, replay, gc and consumer delete do with a database whichever
// process holds it: OpenView reads the file when it is free and asks the
// holder otherwise (both are a View); Read does so for one function, and
// reads the file when the holder stops before the function gave anything
// (ErrUnanswered); GC compacts at rest, or has the holder drop the same
// online; DeleteConsumer deletes at rest or in the holder.
//
// The protocol is HTTP/1.1 over the socket, JSON: one object for a
// status or an info request, JSON Lines for a scan, each line {"item":
// ...}, ending with {"end": true} or {"error": "..."}, so that a cut
// connection is never taken for a short answer.
package control
