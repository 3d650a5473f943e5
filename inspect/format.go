package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// tableBlock is how many rows a table aligns at once: a long listing then
// streams in constant memory, its columns widening between blocks if need be.
const tableBlock = 1000

// table writes aligned columns for people on a terminal.
type table struct {
	tw   *tabwriter.Writer
	rows int
}

// newTable starts a table with a header row.
func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	fmt.Fprintln(t.tw, strings.Join(header, "\t"))
	return t
}

// row adds one row.
func (t *table) row(cells ...string) error {
	if _, err := fmt.Fprintln(t.tw, strings.Join(cells, "\t")); err != nil {
		return err
	}
	if t.rows++; t.rows%tableBlock == 0 {
		return t.tw.Flush()
	}
	return nil
}

// flush writes out what is buffered.
func (t *table) flush() error { return t.tw.Flush() }

// jsonLines writes one JSON object per line.
type jsonLines struct{ enc *json.Encoder }

func newJSONLines(w io.Writer) *jsonLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonLines{enc: enc}
}

// write encodes v as one line.
func (j *jsonLines) write(v any) error { return j.enc.Encode(v) }

// writeJSONObject writes v as one indented JSON document.
func writeJSONObject(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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

// humanBytes renders a size exactly and in IEC units: "40960 (40.0 KiB)".
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n), "B"
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", n, v, unit)
}

// rawText shows raw input for people: quoted, shortened to max runes.
func rawText(raw []byte, max int) string {
	if !utf8.Valid(raw) {
		return fmt.Sprintf("(%d bytes, not UTF-8; see --json)", len(raw))
	}
	s := string(raw)
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// frontierText renders a frontier for people: "frontier T", or
// "complete".
func frontierText(t uint64, complete bool) string {
	if complete {
		return "complete"
	}
	return fmt.Sprintf("frontier %d", t)
}
