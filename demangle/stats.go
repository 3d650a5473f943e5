package demangle

import "github.com/cdclog/cdclog/cdc"

// Stats counts what a receiver has seen since it was created (or restored,
// for counters carried in a snapshot).
type Stats struct {
	// Updates and Progress count accepted messages of each kind.
	Updates  uint64 `msgpack:"updates" json:"updates"`
	Progress uint64 `msgpack:"progress" json:"progress"`
	// Duplicates counts messages that repeated what the receiver held;
	// Stale those only about times below the frontier. Both are dropped.
	Duplicates uint64 `msgpack:"duplicates" json:"duplicates"`
	Stale      uint64 `msgpack:"stale" json:"stale"`
	// Violations counts rejected messages that contradicted held ones.
	Violations uint64 `msgpack:"violations" json:"violations"`
	// EmittedUpdates and EmittedTimes count the clean output: updates
	// released, and completed times that held at least one update.
	EmittedUpdates uint64 `msgpack:"emitted_updates" json:"emitted_updates"`
	EmittedTimes   uint64 `msgpack:"emitted_times" json:"emitted_times"`
}

func (s *Stats) count(k cdc.Kind, o Outcome) {
	switch o {
	case Duplicate:
		s.Duplicates++
	case Stale:
		s.Stale++
	case Accepted:
		if k == cdc.KindUpdate {
			s.Updates++
		} else {
			s.Progress++
		}
	}
}

// Stats returns the receiver's counters.
func (r *Receiver) Stats() Stats { return r.stats }
