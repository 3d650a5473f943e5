package recovery

import "encoding/json"

// The JSON form of a Status ('cdclog inspect status --json'). Its field
// names are those of Status's tags and are stable; its types follow two
// rules:
//
//   - A complete stream has no frontier: "frontier" is null (and
//     "complete" true), never the meaningless number the struct holds.
//   - JSON numbers are exact in JavaScript and in jq 1.6 only up to 2^53.
//     A time is any uint64 the input carries, and so is the count a
//     progress statement gives a time: those fields are decimal strings
//     ("frontier": "18446744073709551614"), as in the proto3 JSON mapping
//     of 64-bit integers. They are frontier, first_incomplete_time,
//     expected_updates, memory_horizon, wal.min_time, wal.max_time and
//     wal.floor. Every
//     other integer counts what cdclog itself stored or holds (messages,
//     records, updates, bytes) and stays a number: each grows by at most
//     one per message accepted or byte written, and 2^53 messages at 20
//     million a second take 14 years.

// statusJSON is Status as written: every field of Status, in its order,
// with the types above. status_json_test.go checks that it keeps up with
// Status.
type statusJSON struct {
	Path                string  `json:"path"`
	SchemaVersion       uint64  `json:"schema_version"`
	Created             string  `json:"created"`
	Frontier            *uint64 `json:"frontier,string"`
	Complete            bool    `json:"complete"`
	FirstIncompleteTime *uint64 `json:"first_incomplete_time,string"`
	Waiting             string  `json:"waiting"`
	ExpectedUpdates     *uint64 `json:"expected_updates,string"`
	HeldUpdates         int     `json:"held_updates"`
	Reason              string  `json:"reason"`

	PendingTimes   int     `json:"pending_times"`
	PendingUpdates int     `json:"pending_updates"`
	MemoryHorizon  *uint64 `json:"memory_horizon,string"`
	PendingOnDisk  int64   `json:"pending_on_disk"`

	AcceptedUpdates  uint64 `json:"accepted_updates"`
	AcceptedProgress uint64 `json:"accepted_progress"`
	Duplicates       uint64 `json:"duplicates"`
	Stale            uint64 `json:"stale"`
	Violations       uint64 `json:"violations"`
	Skipped          uint64 `json:"skipped"`
	Quarantined      uint64 `json:"quarantined"`

	WAL walStatusJSON `json:"wal"`

	OutputRecords   uint64 `json:"output_records"`
	OutputFrom      uint64 `json:"output_from"`
	EmittedUpdates  uint64 `json:"emitted_updates"`
	EmittedTimes    uint64 `json:"emitted_times"`
	OutputFile      string `json:"output_file,omitempty"`
	OutputFileBytes int64  `json:"output_file_bytes"`

	Consumers []ConsumerInfo `json:"consumers"`

	LastCheckpoint string `json:"last_checkpoint"`
	FileBytes      int64  `json:"file_bytes"`
}

// walStatusJSON is WALStatus as written.
type walStatusJSON struct {
	Entries uint64  `json:"entries"`
	Chunks  int     `json:"chunks"`
	Bytes   int64   `json:"bytes"`
	MinTime *uint64 `json:"min_time,string"`
	MaxTime *uint64 `json:"max_time,string"`
	Floor   uint64  `json:"floor,string"`
}

// MarshalJSON writes the status in its stable JSON form (see above).
func (s Status) MarshalJSON() ([]byte, error) {
	j := statusJSON{
		Path: s.Path, SchemaVersion: s.SchemaVersion, Created: s.Created,
		Complete: s.Complete, FirstIncompleteTime: s.FirstIncompleteTime, Waiting: s.Waiting,
		ExpectedUpdates: s.ExpectedUpdates, HeldUpdates: s.HeldUpdates, Reason: s.Reason,
		PendingTimes: s.PendingTimes, PendingUpdates: s.PendingUpdates,
		MemoryHorizon: s.MemoryHorizon, PendingOnDisk: s.PendingOnDisk,
		AcceptedUpdates: s.AcceptedUpdates, AcceptedProgress: s.AcceptedProgress,
		Duplicates: s.Duplicates, Stale: s.Stale, Violations: s.Violations, Skipped: s.Skipped, Quarantined: s.Quarantined,
		WAL: walStatusJSON{Entries: s.WAL.Entries, Chunks: s.WAL.Chunks, Bytes: s.WAL.Bytes,
			MinTime: s.WAL.MinTime, MaxTime: s.WAL.MaxTime, Floor: s.WAL.Floor},
		OutputRecords: s.OutputRecords, OutputFrom: s.OutputFrom, EmittedUpdates: s.EmittedUpdates, EmittedTimes: s.EmittedTimes,
		OutputFile: s.OutputFile, OutputFileBytes: s.OutputFileBytes, Consumers: s.Consumers,
		LastCheckpoint: s.LastCheckpoint, FileBytes: s.FileBytes,
	}
	if j.Consumers == nil {
		j.Consumers = []ConsumerInfo{}
	}
	if !s.Complete {
		f := s.Frontier
		j.Frontier = &f
	}
	return json.Marshal(&j)
}

// UnmarshalJSON reads what MarshalJSON writes, for Go clients of the JSON
// form. A null frontier reads as 0 (with Complete set).
func (s *Status) UnmarshalJSON(b []byte) error {
	var j statusJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Status{
		Path: j.Path, SchemaVersion: j.SchemaVersion, Created: j.Created,
		Complete: j.Complete, FirstIncompleteTime: j.FirstIncompleteTime, Waiting: j.Waiting,
		ExpectedUpdates: j.ExpectedUpdates, HeldUpdates: j.HeldUpdates, Reason: j.Reason,
		PendingTimes: j.PendingTimes, PendingUpdates: j.PendingUpdates,
		MemoryHorizon: j.MemoryHorizon, PendingOnDisk: j.PendingOnDisk,
		AcceptedUpdates: j.AcceptedUpdates, AcceptedProgress: j.AcceptedProgress,
		Duplicates: j.Duplicates, Stale: j.Stale, Violations: j.Violations, Skipped: j.Skipped, Quarantined: j.Quarantined,
		WAL: WALStatus{Entries: j.WAL.Entries, Chunks: j.WAL.Chunks, Bytes: j.WAL.Bytes,
			MinTime: j.WAL.MinTime, MaxTime: j.WAL.MaxTime, Floor: j.WAL.Floor},
		OutputRecords: j.OutputRecords, OutputFrom: j.OutputFrom, EmittedUpdates: j.EmittedUpdates, EmittedTimes: j.EmittedTimes,
		OutputFile: j.OutputFile, OutputFileBytes: j.OutputFileBytes, Consumers: j.Consumers,
		LastCheckpoint: j.LastCheckpoint, FileBytes: j.FileBytes,
	}
	if j.Frontier != nil {
		s.Frontier = *j.Frontier
	}
	return nil
}
