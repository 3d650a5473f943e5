package ordering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// A merge run's every observable result, to compare the fast path with
// the reference one.
type mergeResult struct {
	out     string
	stats   MergeStats
	err     string
	errType string
	log     string
	rejects []cdc.Reject
}

// shardText is one generated shard: its bytes and how its reader hands
// them out.
type shardText struct {
	data   string
	reader int // 0 plain, 1 one byte at a time, 2 half reads, 3 data with EOF
	failAt int // > 0: the read fails after this many bytes
}

var errDisk = errors.New("disk on fire")

func (s shardText) open() io.Reader {
	var r io.Reader = strings.NewReader(s.data)
	if s.failAt > 0 && s.failAt < len(s.data) {
		r = io.MultiReader(strings.NewReader(s.data[:s.failAt]), iotest.ErrReader(errDisk))
	}
	switch s.reader {
	case 1:
		r = iotest.OneByteReader(r)
	case 2:
		r = iotest.HalfReader(r)
	case 3:
		r = iotest.DataErrReader(r)
	}
	return r
}

// runMerge runs one implementation over the shards and collects its
// result; chunkSize only applies to the fast path.
func runMerge(t interface{ Fatalf(string, ...any) }, fast bool, chunkSize int, shards []shardText, policy cdc.ErrorPolicy, reports int) mergeResult {
	in := make([]Shard, len(shards))
	for i, s := range shards {
		in[i] = Shard{Name: fmt.Sprintf("shard-%d", i), R: s.open()}
	}
	var out, log bytes.Buffer
	q := &rejectList{}
	opts := MergeOptions{OnError: policy, DisorderReports: reports,
		Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{ReplaceAttr: dropTime}))}
	if policy == cdc.Quarantine {
		opts.Quarantine = q
	}
	var st MergeStats
	var err error
	if fast {
		m := newMerge(in, opts)
		m.chunkSize = chunkSize
		err = m.run(context.Background(), &out)
		st = m.stats
	} else {
		st, err = mergeJSONLReference(context.Background(), in, &out, opts)
	}
	r := mergeResult{out: out.String(), stats: st, log: log.String(), rejects: q.got}
	if err != nil {
		r.err, r.errType = err.Error(), fmt.Sprintf("%T", err)
		if errors.Is(err, errDisk) != strings.Contains(r.err, errDisk.Error()) {
			t.Fatalf("error %v does not wrap the read error", err)
		}
	}
	return r
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// lineGen draws one line of a shard (without its terminator): mostly
// records under keys from keyGen, in every notation and layout, some
// longer than small chunks; and blank lines and bad ones of every kind.
func lineGen(shard int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		switch rapid.IntRange(0, 19).Draw(t, "kind") {
		case 0:
			return rapid.SampledFrom([]string{"", " ", "\t \r"}).Draw(t, "blank")
		case 1:
			return rapid.SampledFrom([]string{
				"not json", `{"meta":`, `[1,2]`, `{"meta":{}}`, `{"meta":7}`, `{"meta":{"created_at":1}}`,
				`{"meta":{"created_at":1,"sequence_number":"12x"}}`, `{"meta":{"created_at":"soon","sequence_number":"1"}}`,
				`{"meta":{"created_at":1,"sequence_number":"1"}} {}`, "{\"meta\":{\"created_at\":1,\"sequence_number\":\"1\"},\"s\":\"\x01\"}",
				`{"meta":{"created_at":1,"sequence_number":"1"},"x":01}`, "\xff<&>",
			}).Draw(t, "bad")
		}
		at, seq := createdAtGen().Draw(t, "at"), seqGen().Draw(t, "seq")
		if rapid.Bool().Draw(t, "at as number") && !strings.ContainsAny(at, "T-") && !strings.HasPrefix(at, "0") {
			at = strings.TrimRight(at, ".") // a JSON number
		} else {
			at = `"` + at + `"`
		}
		if rapid.Bool().Draw(t, "seq as number") && (seq == "0" || !strings.HasPrefix(seq, "0")) {
			// a JSON integer
		} else {
			seq = `"` + seq + `"`
		}
		pad := strings.Repeat("p", rapid.SampledFrom([]int{0, 3, 40, 300}).Draw(t, "pad"))
		id := rapid.IntRange(0, 1<<20).Draw(t, "id")
		var line string
		switch rapid.IntRange(0, 4).Draw(t, "layout") {
		case 0:
			line = fmt.Sprintf(`{"dynamodb":{"ApproximateCreationDateTime":%s,"SequenceNumber":%s},"id":"%d-%d","pad":"%s"}`, at, seq, shard, id, pad)
		case 1:
			line = fmt.Sprintf(` { "id" : "%d-%d" , "meta" : { "sequence_number" : %s , "created_at" : %s } , "s" : "\u00e9\n\"\xff" } `, shard, id, seq, at)
		default:
			line = fmt.Sprintf(`{"meta":{"created_at":%s,"sequence_number":%s},"id":"%d-%d","pad":"%s","n":[1,-2.5e3,true,null,{}]}`, at, seq, shard, id, pad)
		}
		if rapid.IntRange(0, 9).Draw(t, "mutate") == 0 {
			// one byte changed, dropped or added: mostly bad, and the
			// same shape as good records but for that byte
			i := rapid.IntRange(0, len(line)-1).Draw(t, "at byte")
			c := rapid.SampledFrom([]string{"", "x", `"`, `\`, "{", "}", ",", ":", "1", "\x01", " "}).Draw(t, "byte")
			drop := 1
			if rapid.Bool().Draw(t, "insert") {
				drop = 0
			}
			line = line[:i] + c + line[i+drop:]
		}
		return line
	})
}

// shardGen draws a shard: lines in key order or not, LF or CRLF, maybe a
// byte order mark, maybe no final line end, read in any way, maybe failing.
func shardGen(i int) *rapid.Generator[shardText] {
	return rapid.Custom(func(t *rapid.T) shardText {
		lines := rapid.SliceOfN(lineGen(i), 0, 25).Draw(t, "lines")
		if rapid.Bool().Draw(t, "sorted") {
			sortLinesByKey(lines)
		}
		eol := rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol")
		data := strings.Join(lines, eol)
		if len(lines) > 0 && rapid.Bool().Draw(t, "final eol") {
			data += eol
		}
		if rapid.IntRange(0, 4).Draw(t, "bom") == 0 {
			data = "\xEF\xBB\xBF" + data
		}
		s := shardText{data: data, reader: rapid.IntRange(0, 3).Draw(t, "reader")}
		if rapid.IntRange(0, 5).Draw(t, "fails") == 0 {
			s.failAt = rapid.IntRange(0, len(data)).Draw(t, "failAt")
		}
		return s
	})
}

// sortLinesByKey sorts the lines that have a key by it, in place, leaving
// the others where they are relative to each other's slots.
func sortLinesByKey(lines []string) {
	var slots []int
	var keyed []string
	for i, l := range lines {
		if _, err := recordKeySlow([]byte(l)); err == nil {
			slots, keyed = append(slots, i), append(keyed, l)
		}
	}
	keyOf := func(l string) Key { k, _ := recordKeySlow([]byte(l)); return k }
	for i := 1; i < len(keyed); i++ { // insertion sort: stable, and small
		for j := i; j > 0 && keyOf(keyed[j]).Compare(keyOf(keyed[j-1])) < 0; j-- {
			keyed[j], keyed[j-1] = keyed[j-1], keyed[j]
		}
	}
	for n, i := range slots {
		lines[i] = keyed[n]
	}
}

// TestMergeJSONLMatchesReference is the differential test of the fast
// path: on random shards (sorted or not, bad and blank lines, CRLF, byte
// order marks, odd readers, read errors), under every policy and with
// chunks from one byte up, MergeJSONL's output, stats, error, log and
// quarantine are exactly the reference merge's (the path before it).
func TestMergeJSONLMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "shards")
		shards := make([]shardText, n)
		for i := range shards {
			shards[i] = shardGen(i).Draw(t, fmt.Sprintf("shard %d", i))
		}
		policy := rapid.SampledFrom([]cdc.ErrorPolicy{cdc.Fail, cdc.Skip, cdc.Quarantine}).Draw(t, "policy")
		reports := rapid.SampledFrom([]int{0, 1, -1}).Draw(t, "reports")
		chunk := rapid.SampledFrom([]int{1, 7, 64, 500, 0}).Draw(t, "chunk")
		want := runMerge(t, false, 0, shards, policy, reports)
		got := runMerge(t, true, chunk, shards, policy, reports)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fast path differs from the reference:\n got %+v\nwant %+v", got, want)
		}
	})
}

// TestMergeJSONLMatchesReferenceOnLongLines: lines around MaxLineSize,
// with either line end and at the end of the input, are kept or rejected
// (with their first KiB) exactly as by the reference.
func TestMergeJSONLMatchesReferenceOnLongLines(t *testing.T) {
	if testing.Short() {
		t.Skip("16 MiB lines")
	}
	record := func(n int) string { // a record of exactly n bytes
		head := `{"meta":{"created_at":1,"sequence_number":"1"},"pad":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	for _, n := range []int{MaxLineSize - 1, MaxLineSize, MaxLineSize + 1, MaxLineSize + 2, MaxLineSize + 3, 3 * MaxLineSize} {
		for _, eol := range []string{"\n", "\r\n", ""} {
			data := "\xEF\xBB\xBF" + record(n) + eol
			if eol != "" {
				data += rec1(2, 2) + eol
			}
			shards := []shardText{{data: data}, {data: rec1(1, 1) + "\n"}}
			want := runMerge(t, false, 0, shards, cdc.Quarantine, 0)
			got := runMerge(t, true, 0, shards, cdc.Quarantine, 0)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("line of %d bytes, end %q: fast path differs:\n got %.300v\nwant %.300v", n, eol, got, want)
			}
		}
	}
}

// TestMaxLineSizeDoesNotCountTheByteOrderMark: a byte order mark before
// the first line is not part of its record, so a record of MaxLineSize
// bytes after one is kept, as cdc.Reader keeps such a message, and one
// byte more is too long; by the fast path and the reference alike.
func TestMaxLineSizeDoesNotCountTheByteOrderMark(t *testing.T) {
	if testing.Short() {
		t.Skip("16 MiB lines")
	}
	tests := []struct {
		size     int
		eol      string
		accepted bool
	}{
		{MaxLineSize, "\n", true},
		{MaxLineSize, "\r\n", true},
		{MaxLineSize, "", true},
		{MaxLineSize + 1, "\n", false},
		{MaxLineSize + 1, "\r\n", false},
		{MaxLineSize + 1, "", false},
	}
	for _, tt := range tests {
		record := longRecord(tt.size)
		shards := []shardText{{data: "\xEF\xBB\xBF" + record + tt.eol}}
		for _, fast := range []bool{false, true} {
			got := runMerge(t, fast, 0, shards, cdc.Quarantine, 0)
			kept := got.out == record+"\n" && len(got.rejects) == 0
			rejected := got.out == "" && len(got.rejects) == 1 && got.rejects[0].Truncated
			if got.err != "" || tt.accepted && !kept || !tt.accepted && !rejected {
				t.Errorf("BOM and a %d-byte record, end %q, fast %v: %d bytes out, %d rejects, error %q; want accepted %v",
					tt.size, tt.eol, fast, len(got.out), len(got.rejects), got.err, tt.accepted)
			}
		}
	}
}
