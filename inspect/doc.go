// Package inspect writes what a cdclog database holds, for people and for
// scripts: the views of a control.View (Status, Pending, WAL, Output,
// Quarantine, Consumers), a gc's result (GC) and a check's report (Check),
// each as aligned text or, with Options.JSON, as JSON (one indented object
// for a status, a result or a report; JSON Lines, one object per item, for
// the lists). These are the bytes `cdclog inspect`, `cdclog gc` and
// `cdclog check` print, so a Go program shows a database as the command
// line does; docs/inspect.md documents every text line and JSON field.
// It also writes what `cdclog replay --db` prints: the stored output in
// the wire format (Replay), the stream re-derived from the WAL
// (Rederive), and their comparison (VerifyStored, rendered by Verify).
//
// The package reads nothing itself: the caller opens the view
// (control.OpenView answers from the file at rest or from the running
// process that holds it) and gives a writer; the writer is not flushed.
// Long lists stream: a table aligns a block of rows at a time.
package inspect
