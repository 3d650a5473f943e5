package clean

import (
	"fmt"

	"github.com/cdclog/cdclog/internal/memlimit"
)

// A WriteError reports that the clean stream, or the quarantine, could not
// be written. The stream stops.
type WriteError struct {
	// Quarantine is set when writing to Options.Quarantine failed, clear
	// when the output failed.
	Quarantine bool
	Err        error
}

// Error returns "write output: what failed", or the RejectWriter's error
// as it is (it says what it wrote to).
func (e *WriteError) Error() string {
	if e.Quarantine {
		return e.Err.Error()
	}
	return "write output: " + e.Err.Error()
}

// Unwrap returns the write's error.
func (e *WriteError) Unwrap() error { return e.Err }

// A MemoryError reports that the heap passed Options.MaxMemory: what the
// receiver held, pending, took more memory than allowed. The stream stops.
type MemoryError struct {
	// Live is the heap the last collection found live, Max the limit, in
	// bytes.
	Live, Max uint64
	// Frontier is the receiver's; Times and Updates are what it held in
	// memory, Beyond the messages it kept packed beyond its horizon.
	Frontier       uint64
	Times, Updates int
	Beyond         int64
}

// Error says how far past the limit the heap is, what was held and what
// to do, in the words the command line prints after "demangle: ": the
// limit is named as its flag, --max-memory (Options.MaxMemory), as
// cdc.OptionError names options.
func (e *MemoryError) Error() string {
	return fmt.Sprintf("the pending state takes %s of memory, past --max-memory %s "+
		"(frontier %d; %d updates at %d times in memory, %d messages beyond): demangle holds it in memory; "+
		"'cdclog ingest --db PATH' keeps it on disk, or raise --max-memory",
		memlimit.FormatSize(e.Live), memlimit.FormatSize(e.Max), e.Frontier, e.Updates, e.Times, e.Beyond)
}
