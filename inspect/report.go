package inspect

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
)

// GC writes what a gc of the database at path did (recovery.GC,
// control.GC): "key: value" lines, or one JSON object. note, when not
// empty, says why the file was not compacted, after its size.
func GC(w io.Writer, path string, res *recovery.GCResult, note string, o Options) error {
	if o.JSON {
		return writeJSONObject(w, res)
	}
	return writeGCText(w, path, res, note)
}

// GCNote is GC's note for a gc that did not compact the file, and why:
// held is the running cdclog that dropped the same online (control.GC),
// or nil; noCompact is what recovery.GCOptions.NoCompact asked. It is
// empty when the file was compacted.
func GCNote(held *control.Holder, noCompact bool) string {
	switch {
	case held != nil:
		return "not compacted: held by a running cdclog, which reuses the freed pages"
	case noCompact:
		return "not compacted: later writes reuse the freed pages"
	}
	return ""
}

// Check writes a check's report (recovery.Check): "key: value" lines and
// one line per problem, or one JSON object.
func Check(w io.Writer, rep *recovery.CheckReport, o Options) error {
	if o.JSON {
		return writeJSONObject(w, rep)
	}
	return writeCheckText(w, rep)
}

// ProblemCount says how many problems rep holds: "1 problem", "3
// problems".
func ProblemCount(rep *recovery.CheckReport) string {
	n := len(rep.Problems) + rep.ProblemsOmitted
	if n == 1 {
		return "1 problem"
	}
	return strconv.Itoa(n) + " problems"
}

// writeGCText prints what gc did as aligned "key: value" lines.
func writeGCText(w io.Writer, path string, res *recovery.GCResult, note string) error {
	var kv keyValues
	kv.add("database", path)
	if res.Floor == 0 {
		kv.add("wal floor", "0 (nothing to drop)")
	} else {
		kv.add("wal floor", u64(res.Floor)+" (the WAL below this time is dropped, whole chunks at a time)")
	}
	kv.add("chunks deleted", strconv.Itoa(res.ChunksDeleted))
	if res.OutputRecordsDropped > 0 {
		kv.add("output dropped", fmt.Sprintf("%d records in %d chunks", res.OutputRecordsDropped, res.OutputChunksDeleted))
	} else {
		kv.add("output dropped", "none")
	}
	kv.add("output kept from", u64(res.OutputFrom))
	kv.add("output held by", res.OutputHeldBy)
	kv.add("size before", humanBytes(res.BytesBefore))
	after := humanBytes(res.BytesAfter)
	if note != "" {
		after += " (" + note + ")"
	}
	kv.add("size after", after)
	return kv.write(w)
}

// writeCheckText prints the report as aligned "key: value" lines, then
// one line per problem.
func writeCheckText(w io.Writer, rep *recovery.CheckReport) error {
	var kv keyValues
	kv.add("database", rep.Path)
	schema := u64(rep.SchemaVersion)
	if rep.SchemaVersion < 2 {
		schema += " (written before checksums: records are unverified until an ingest or gc upgrades it)"
	}
	kv.add("schema version", schema)
	kv.add("pages", strconv.Itoa(rep.Pages))
	var recs []string
	for _, b := range rep.Buckets {
		s := fmt.Sprintf("%s %d", b.Name, b.Records)
		if b.Unverified > 0 {
			s += fmt.Sprintf(" (%d unverified)", b.Unverified)
		}
		recs = append(recs, s)
	}
	kv.add("records", strings.Join(recs, ", "))
	kv.add("wal entries", u64(rep.WALEntries))
	out := u64(rep.OutputRecords)
	if rep.OutputFrom > 1 {
		out += fmt.Sprintf(" (from record %d on: gc's retention dropped those before it)", rep.OutputFrom)
	}
	kv.add("output records", out)
	if len(rep.Unknown) > 0 {
		kv.add("unknown buckets", strings.Join(rep.Unknown, ", ")+" (not checked beyond bbolt's check)")
	}
	kv.add("checks run", strings.Join(rep.Checks, ", "))
	if rep.OK {
		kv.add("result", "ok: every check holds")
	} else {
		kv.add("result", ProblemCount(rep))
	}
	if err := kv.write(w); err != nil {
		return err
	}
	for _, p := range rep.Problems {
		if _, err := fmt.Fprintf(w, "  %s\n", p); err != nil {
			return err
		}
	}
	if rep.ProblemsOmitted > 0 {
		if _, err := fmt.Fprintf(w, "  ... and %d more (raise --max-problems to list them)\n", rep.ProblemsOmitted); err != nil {
			return err
		}
	}
	return nil
}
