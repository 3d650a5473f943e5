package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func inspectStatusCommand() *cli.Command {
	return inspectView("status",
		"where the stream stands and why the frontier does not move",
		"cdclog inspect --db PATH status [--json]",
		`Prints the database's state as of its last commit: schema version, the
frontier (every time below it is complete and emitted), the first incomplete
time and why it is incomplete, in plain words:
   waiting for a progress statement covering time T
      no progress statement received so far says how many updates T has;
   time T holds N of M expected updates
      a progress statement says T has M updates and N have arrived.
Then the counts: pending times and updates, messages accepted, duplicates
dropped, violations, skipped and quarantined messages; the write-ahead log's
entries, size and time range; output records committed, the first one the
output log keeps, and the output file; each registered consumer's next record
and lag; the last checkpoint and the database file's size.

With --json it prints the same as one JSON object; docs/inspect.md lists the
fields, whose names and types are stable. Times are strings, exact beyond
2^53; a complete stream has "frontier": null and "complete": true.

Examples:
   cdclog inspect --db state.db status
   cdclog inspect --db state.db status --json | jq '.frontier, .reason'`,
		runInspectStatus)
}

func runInspectStatus(c *cli.Context) error {
	return runView(c, view[statusView]{
		name: "inspect status",
		what: "read status",
		scan: func(c *cli.Context, r control.View, yield func(*statusView) error) error {
			s, err := readStatusView(getEnv(c), r)
			if err != nil {
				return err
			}
			return yield(s)
		},
		json:   func(s *statusView) any { return s },
		object: true,
		text:   writeStatusText,
	})
}

// writeStatusText prints a status as aligned "key: value" lines.
func writeStatusText(w io.Writer, v *statusView) error {
	s := &v.Status
	var kv keyValues
	kv.add("database", s.Path)
	kv.add("schema version", u64(s.SchemaVersion))
	kv.add("created", orNone(s.Created))
	if s.Complete {
		kv.add("frontier", "complete: every time has been emitted")
	} else {
		kv.add("frontier", u64(s.Frontier))
	}
	if s.FirstIncompleteTime != nil {
		kv.add("first incomplete time", u64(*s.FirstIncompleteTime))
	} else {
		kv.add("first incomplete time", "none")
	}
	kv.add("why incomplete", s.Reason)
	kv.add("pending times", strconv.Itoa(s.PendingTimes))
	kv.add("pending updates", strconv.Itoa(s.PendingUpdates))
	if s.MemoryHorizon != nil {
		kv.add("pending on disk", fmt.Sprintf("%d messages from time %s on, not deduplicated yet", s.PendingOnDisk, u64(*s.MemoryHorizon)))
	}
	kv.add("accepted updates", u64(s.AcceptedUpdates))
	kv.add("accepted progress", u64(s.AcceptedProgress))
	kv.add("duplicates dropped", u64(s.Duplicates))
	kv.add("stale dropped", u64(s.Stale)+" (below the frontier)")
	kv.add("violations", u64(s.Violations))
	kv.add("skipped", u64(s.Skipped))
	kv.add("quarantined", u64(s.Quarantined))
	writeWALStatus(&kv, &s.WAL)
	kv.add("output records", u64(s.OutputRecords))
	if s.OutputFrom > 1 {
		kv.add("output kept from", u64(s.OutputFrom)+" (gc's retention dropped the records before it)")
	} else {
		kv.add("output kept from", "1 (gc has dropped no output)")
	}
	kv.add("emitted updates", u64(s.EmittedUpdates))
	kv.add("emitted times", u64(s.EmittedTimes))
	if s.OutputFile != "" {
		kv.add("output file", s.OutputFile)
		kv.add("output file size", humanBytes(s.OutputFileBytes))
	} else {
		kv.add("output file", "none (records went to stdout; 'cdclog replay' re-sends them)")
	}
	if len(s.Consumers) == 0 {
		kv.add("consumers", "none")
	}
	for _, ci := range s.Consumers {
		kv.add("consumer "+ci.Name, fmt.Sprintf("next record %d, lag %d", ci.Next, ci.Lag))
	}
	addBrokerRows(&kv, &v.Positions)
	kv.add("last checkpoint", orNone(s.LastCheckpoint))
	kv.add("file size", humanBytes(s.FileBytes))
	return kv.write(w)
}

func writeWALStatus(kv *keyValues, ws *recovery.WALStatus) {
	kv.add("wal entries", u64(ws.Entries))
	kv.add("wal chunks", strconv.Itoa(ws.Chunks))
	kv.add("wal size", humanBytes(ws.Bytes))
	if ws.MinTime != nil && ws.MaxTime != nil {
		kv.add("wal time range", fmt.Sprintf("%d to %d", *ws.MinTime, *ws.MaxTime))
	} else {
		kv.add("wal time range", "empty")
	}
	if ws.Floor == 0 {
		kv.add("wal floor", "0 (gc has dropped nothing)")
	} else {
		kv.add("wal floor", u64(ws.Floor)+" (gc dropped the WAL below it)")
	}
}

// keyValues collects "key: value" lines and aligns the values.
type keyValues struct {
	keys, values []string
	width        int
}

func (kv *keyValues) add(key, value string) {
	kv.keys, kv.values = append(kv.keys, key), append(kv.values, value)
	kv.width = max(kv.width, len(key)+1)
}

func (kv *keyValues) write(w io.Writer) error {
	for i, k := range kv.keys {
		if _, err := fmt.Fprintf(w, "%-*s %s\n", kv.width, k+":", kv.values[i]); err != nil {
			return err
		}
	}
	return nil
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
