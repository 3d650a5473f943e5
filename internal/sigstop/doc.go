// Package sigstop gives a long cdclog command its two-step stop: the first
// SIGINT or SIGTERM ends a context (the command stops reading and commits
// what it read), the second exits the process at once, with the exit code
// a shell reports for the signal.
package sigstop
