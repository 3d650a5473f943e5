package inspect

import (
	"fmt"
	"io"
	"strings"

	"github.com/cdclog/cdclog/recovery"
)

// Verify writes the outcome of comparing a database's stored output with
// the stream re-derived from its WAL (recovery.Reader.Verify), as `cdclog
// replay --verify` prints it: "verified N records: identical", or the
// count compared and the first record that differs, stored and
// re-derived. walFloor is the database's WAL floor: what gc dropped below
// it, and what its retention dropped of the output, are said in a note.
func Verify(w io.Writer, res *recovery.VerifyResult, walFloor uint64) error {
	var notes []string
	switch {
	case walFloor == ^uint64(0):
		notes = append(notes, "gc dropped the WAL of the whole stream, which is complete")
	case walFloor > 0:
		notes = append(notes, fmt.Sprintf("from time %d on: gc dropped the WAL below it", walFloor))
	}
	if res.OutputFrom > 1 {
		notes = append(notes, fmt.Sprintf("from record %d on: gc's retention dropped the output before it", res.OutputFrom))
	}
	var note string
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	switch {
	case res.Match && res.Compared == 0 && note == "":
		// Nothing dropped: the database has released nothing yet.
		_, err := fmt.Fprintf(w, "verified 0 records: the stored output and the re-derived stream are both empty\n")
		return err
	case res.Match && res.Compared == 0:
		_, err := fmt.Fprintf(w, "verified 0 records%s: nothing was left to compare\n", note)
		return err
	case res.Match:
		_, err := fmt.Fprintf(w, "verified %d records%s: identical\n", res.Compared, note)
		return err
	}
	_, err := fmt.Fprintf(w, "verified %d records%s, then first difference at record %d:\n  stored:     %s\n  re-derived: %s\n",
		res.Compared, note, res.FirstDiff, orEnd(res.Stored, "stored output"), orEnd(res.Derived, "re-derived stream"))
	return err
}

func orEnd(rendered, stream string) string {
	if rendered == "" {
		return "(nothing: the " + stream + " ends here)"
	}
	return rendered
}
