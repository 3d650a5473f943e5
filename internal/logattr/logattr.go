// Package logattr builds the slog attributes that more than one package
// logs in the same words, so that a command and a service embedding
// cdclog write the same summary line.
package logattr

import "log/slog"

// Frontier are the log fields that say where a stream stands, named as
// in 'cdclog inspect status --json': frontier (the number), complete (the
// flag), waiting ("progress" or "updates": what the first incomplete time
// lacks) and reason (the sentence). Once the stream is complete only
// complete=true remains.
func Frontier(frontier uint64, complete bool, waiting, reason string) []slog.Attr {
	if complete {
		return []slog.Attr{slog.Bool("complete", true)}
	}
	return []slog.Attr{slog.Uint64("frontier", frontier), slog.Bool("complete", false),
		slog.String("waiting", waiting), slog.String("reason", reason)}
}
