package ordering

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"pgregory.net/rapid"
)

// readAll collects records and line errors from r until EOF or a fatal error.
func readAll(t *testing.T, r io.Reader) (records []string, lines []int64, bad []*LineError, err error) {
	t.Helper()
	j := NewJSONLReader(r, "shard.jsonl")
	for {
		_, rec, err := j.Next()
		var le *LineError
		switch {
		case errors.Is(err, io.EOF):
			return records, lines, bad, nil
		case errors.As(err, &le):
			le.Raw = append([]byte(nil), le.Raw...)
			bad = append(bad, le)
		case err != nil:
			return records, lines, bad, err
		default:
			records = append(records, string(rec))
			lines = append(lines, j.Line())
		}
	}
}

func rec1(at, seq int) string {
	return fmt.Sprintf(`{"meta":{"created_at":%d,"sequence_number":"%d"}}`, at, seq)
}

func TestJSONLLineEndings(t *testing.T) {
	a, b, c := rec1(1, 1), rec1(2, 2), rec1(3, 3)
	input := "\xEF\xBB\xBF" + a + "\r\n" + "\n" + "  \t\r\n" + b + "\n" + c // BOM, CRLF, blanks, no final LF
	records, lines, bad, err := readAll(t, strings.NewReader(input))
	if err != nil || len(bad) != 0 {
		t.Fatalf("err %v, bad %v", err, bad)
	}
	if want := []string{a, b, c}; fmt.Sprint(records) != fmt.Sprint(want) {
		t.Fatalf("records %q, want %q", records, want)
	}
	if fmt.Sprint(lines) != "[1 4 5]" {
		t.Fatalf("lines %v, want [1 4 5]", lines)
	}
}

func TestJSONLKeepsBytesUnchanged(t *testing.T) {
	odd := ` {"z" : 1, "meta":{"sequence_number":"007","created_at":"1970-01-01T00:00:01+00:00"},"s":"é\u00e9"}  `
	records, _, _, err := readAll(t, strings.NewReader(odd+"\n"))
	if err != nil || len(records) != 1 || records[0] != odd {
		t.Fatalf("records %q (err %v), want the line unchanged", records, err)
	}
}

func TestJSONLBadLinesAreResumable(t *testing.T) {
	input := rec1(1, 1) + "\n" +
		`{"meta":{"created_at":1,"sequence_number":"12x"}}` + "\n" +
		"not json\n" +
		rec1(2, 2) + "\n"
	records, lines, bad, err := readAll(t, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || fmt.Sprint(lines) != "[1 4]" {
		t.Fatalf("records %q at lines %v", records, lines)
	}
	if len(bad) != 2 {
		t.Fatalf("bad lines %v, want 2", bad)
	}
	if got, want := bad[0].Error(), `shard.jsonl:2: meta.sequence_number "12x" is not a decimal integer`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if string(bad[0].Raw) != `{"meta":{"created_at":1,"sequence_number":"12x"}}` {
		t.Errorf("Raw = %q", bad[0].Raw)
	}
	var ke *KeyError
	if !errors.As(bad[0], &ke) || ke.Field != "meta.sequence_number" {
		t.Errorf("LineError does not unwrap to the KeyError: %v", bad[0])
	}
	if !strings.HasPrefix(bad[1].Error(), "shard.jsonl:3: record is not valid JSON") {
		t.Errorf("error %q", bad[1])
	}
}

// longRecord returns a valid record of exactly n bytes.
func longRecord(n int) string {
	head := `{"meta":{"created_at":1,"sequence_number":"1"},"pad":"`
	return head + strings.Repeat("x", n-len(head)-2) + `"}`
}

func TestJSONLLongLines(t *testing.T) {
	max := longRecord(MaxLineSize)
	over := longRecord(MaxLineSize + 1)
	input := rec1(1, 1) + "\n" + max + "\r\n" + over + "\n" + rec1(2, 2) + "\n" + over // last one unterminated
	records, lines, bad, err := readAll(t, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 3 || records[1] != max || fmt.Sprint(lines) != "[1 2 4]" {
		t.Fatalf("got %d records at lines %v; the 16 MiB line must be read whole", len(records), lines)
	}
	if len(bad) != 2 || bad[0].Line != 3 || bad[1].Line != 5 {
		t.Fatalf("bad lines %v, want lines 3 and 5", bad)
	}
	for _, le := range bad {
		if !errors.Is(le, ErrLineTooLong) || len(le.Raw) != tooLongPrefix || string(le.Raw) != over[:tooLongPrefix] {
			t.Errorf("line %d: %v with %d raw bytes, want ErrLineTooLong with the first %d", le.Line, le, len(le.Raw), tooLongPrefix)
		}
	}
}

func TestJSONLReadErrorIsFinal(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(rec1(1, 1)+"\n"+rec1(2, 2)), iotest.ErrReader(boom))
	j := NewJSONLReader(r, "f.jsonl")
	if _, _, err := j.Next(); err != nil {
		t.Fatal(err)
	}
	_, _, err := j.Next()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "f.jsonl after line 1") {
		t.Fatalf("error %v, want the read error with its position", err)
	}
	if _, _, err2 := j.Next(); !errors.Is(err2, boom) {
		t.Fatalf("second call: %v, want the same error", err2)
	}
}

func TestJSONLEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "\xEF\xBB\xBF", "\r\n"} {
		records, _, bad, err := readAll(t, strings.NewReader(in))
		if err != nil || len(records) != 0 || len(bad) != 0 {
			t.Errorf("%q: records %q bad %v err %v", in, records, bad, err)
		}
	}
}

func TestJSONLZeroValue(t *testing.T) {
	var j JSONLReader
	if _, _, err := j.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("zero JSONLReader: %v, want io.EOF", err)
	}
}

func TestJSONLOneByteReads(t *testing.T) {
	input := rec1(1, 1) + "\r\n" + rec1(2, 2)
	records, _, _, err := readAll(t, iotest.OneByteReader(strings.NewReader(input)))
	if err != nil || len(records) != 2 {
		t.Fatalf("records %q err %v", records, err)
	}
}

// TestMergeJSONL merges JSON Lines shards (some lines longer than the read
// buffer) and checks every line comes out once, unchanged, in key order.
func TestMergeJSONL(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(true).Draw(t, "shards")
		sources := make([]Source[[]byte], len(shards))
		want := map[string]int{}
		for i, keys := range shards {
			var b strings.Builder
			for n, k := range keys {
				pad := strings.Repeat("p", rapid.SampledFrom([]int{0, 10, readBufferSize + 7}).Draw(t, "pad"))
				line := fmt.Sprintf(`{"meta":{"created_at":%q,"sequence_number":"%s"},"id":"%d-%d","pad":"%s"}`,
					k.CreatedAt.String(), k.Seq.String(), i, n, pad)
				want[line]++
				b.WriteString(line + "\n")
			}
			sources[i] = NewJSONLReader(strings.NewReader(b.String()), fmt.Sprint(i))
		}
		var prev Key
		err := Merge(sources, func(_ int, it Item[[]byte]) error {
			line := string(it.Record)
			if want[line] == 0 {
				t.Fatalf("emitted a line not in the input, or twice: %.80s", line)
			}
			want[line]--
			if it.Key.Compare(prev) < 0 {
				t.Fatalf("key %v after %v", it.Key, prev)
			}
			prev = it.Key
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for line, n := range want {
			if n != 0 {
				t.Fatalf("line not emitted: %.80s", line)
			}
		}
	})
}
