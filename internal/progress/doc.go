// Package progress draws the advance of a long cdclog run for the person
// watching it: on a terminal, a bar or spinner on stderr (Bar, and Input
// for a run through input files); on a merge, a one-line count (Counter);
// and, for a run whose stderr is a log rather than a terminal, a periodic
// log line (Log).
//
// Whether to draw at all is the caller's decision (cdclog draws only when
// stderr is a terminal and --quiet is off). Every method of a nil *Bar,
// *Input, *Counter or *Logger does nothing, so a caller that chose not to
// draw passes nil and never checks again. Each call takes a lock: update
// once per batch, never per message.
package progress
