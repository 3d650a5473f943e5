package cdc

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Typical messages: what cdclog itself writes.
var (
	benchUpdate   = update(`"k3"`, 1234567, -1)
	benchObject   = update(`{"id":17,"name":"widget","tags":["a","b"]}`, 1234567, 1)
	benchProgress = NewProgress(1234567, 1234568, Count{1234567, 4})
)

// reportRate adds messages per second to a benchmark of n messages per
// iteration of size bytes each.
func reportRate(b *testing.B, n, size int) {
	b.SetBytes(int64(size))
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func benchParseJSON(b *testing.B, line []byte) {
	var m Message
	b.ReportAllocs()
	for b.Loop() {
		if err := ParseJSON(line, &m); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, 1, len(line))
}

func BenchmarkParseJSON(b *testing.B) {
	for _, tc := range []struct {
		name string
		line string
	}{
		{"update", string(AppendJSON(nil, &benchUpdate))},
		{"update-object", string(AppendJSON(nil, &benchObject))},
		{"progress", string(AppendJSON(nil, &benchProgress))},
		{"seed-progress", `{"progress":{"time":1234567,"count":4}}`},
		{"finish", `{"finish":{"time":1234567}}`},
		{"update-spaced", `{"update": {"data": "k3", "time": 1234567, "diff": -1}}`},
		{"update-object-unsorted", `{"update":{"data":{"name":"widget","id":17,"tags":["a","b"]},"time":1234567,"diff":1}}`},
		{"progress-spaced", `{"progress": {"lower": 1234567, "upper": 1234568, "counts": [{"time": 1234567, "count": 4}]}}`},
	} {
		b.Run(tc.name, func(b *testing.B) { benchParseJSON(b, []byte(tc.line)) })
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	for _, tc := range []struct {
		name string
		m    Message
	}{{"update", benchUpdate}, {"progress", benchProgress}} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendJSON(buf[:0], &tc.m)
			}
			reportRate(b, 1, len(buf))
		})
	}
}

func BenchmarkMsgpack(b *testing.B) { benchCodec(b, ParseMsgpack, appendMsgpackOf) }

func BenchmarkBinary(b *testing.B) { benchCodec(b, ParseBinary, AppendBinary) }

// benchCodec measures a binary codec's parse and append on typical
// messages.
func benchCodec(b *testing.B, parse func([]byte, *Message) (int, error), appendTo func([]byte, *Message) []byte) {
	for _, tc := range []struct {
		name string
		m    Message
	}{{"update", benchUpdate}, {"update-object", benchObject}, {"progress", benchProgress}} {
		enc := appendTo(nil, &tc.m)
		b.Run("parse-"+tc.name, func(b *testing.B) {
			var m Message
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(enc, &m); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, 1, len(enc))
		})
		b.Run("append-"+tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = appendTo(buf[:0], &tc.m)
			}
			reportRate(b, 1, len(buf))
		})
	}
}

// typicalStream is n messages as a producer of a CDC stream writes them:
// a few updates per time, then the time's progress statement.
func typicalStream(f Format, n int) []byte {
	var buf []byte
	for i := 0; len(buf) == 0 || i < n; {
		t := uint64(1000 + i/5)
		for k := 0; k < 4 && i < n; k++ {
			m := update(fmt.Sprintf(`"k%d"`, k), t, int64(k%2*2-1))
			buf = appendMessageOf(buf, f, &m)
			i++
		}
		if i < n {
			m := NewProgress(t, t+1, Count{t, 4})
			buf = appendMessageOf(buf, f, &m)
			i++
		}
	}
	return buf
}

func BenchmarkReader(b *testing.B) {
	const n = 100000
	for _, f := range []Format{JSONL, Msgpack} {
		in := typicalStream(f, n)
		b.Run(f.String(), func(b *testing.B) {
			var m Message
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(in), f, "bench")
				for {
					err := r.Next(&m)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(int64(len(in)))
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	msgs := []Message{benchUpdate, benchUpdate, benchUpdate, benchUpdate, benchProgress}
	for _, f := range []Format{JSONL, Msgpack} {
		b.Run(f.String(), func(b *testing.B) {
			w := NewWriter(io.Discard, f)
			b.ReportAllocs()
			for b.Loop() {
				for i := range msgs {
					if err := w.Write(&msgs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(msgs))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkAppendCanonical(b *testing.B) {
	for _, tc := range []struct{ name, in string }{
		{"canonical", `{"id":17,"name":"widget","tags":["a","b"]}`},
		{"unsorted-spaced", `{"tags": ["a", "b"], "name": "widget", "id": 17}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := []byte(tc.in)
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = AppendCanonical(buf[:0], in); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(in)))
		})
	}
}

// libMessage is a message as msgpack.Unmarshal fills it.
type libMessage struct {
	Update *struct {
		Data any    `msgpack:"data"`
		Time uint64 `msgpack:"time"`
		Diff int64  `msgpack:"diff"`
	} `msgpack:"update"`
	Progress *struct {
		Lower  uint64  `msgpack:"lower"`
		Upper  *uint64 `msgpack:"upper"`
		Counts []struct {
			Time  uint64 `msgpack:"time"`
			Count uint64 `msgpack:"count"`
		} `msgpack:"counts"`
	} `msgpack:"progress"`
}

// unmarshalMessage decodes b with msgpack.Unmarshal into a struct and
// converts the result, data as canonical JSON included. It checks less
// than ParseMsgpack (no duplicate keys, no field rules): it is only the
// cost of the library's reflection path, for BenchmarkMsgpackDecoders.
func unmarshalMessage(b []byte, m *Message) error {
	var lm libMessage
	if err := msgpack.Unmarshal(b, &lm); err != nil {
		return err
	}
	switch {
	case lm.Update != nil:
		data, err := appendAnyJSON(nil, lm.Update.Data)
		if err != nil {
			return err
		}
		*m = NewUpdate(data, lm.Update.Time, lm.Update.Diff)
	case lm.Progress != nil:
		p := Progress{Lower: lm.Progress.Lower, Unbounded: lm.Progress.Upper == nil}
		if lm.Progress.Upper != nil {
			p.Upper = *lm.Progress.Upper
		}
		for _, c := range lm.Progress.Counts {
			p.Counts = append(p.Counts, Count{c.Time, c.Count})
		}
		*m = Message{Kind: KindProgress, Progress: p}
	default:
		return fmt.Errorf("no tag")
	}
	return nil
}

// appendAnyJSON writes a value decoded by the library as canonical JSON.
func appendAnyJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return refQuote(dst, v)
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = refQuote(dst, k); err != nil {
				return nil, err
			}
			if dst, err = appendAnyJSON(append(dst, ':'), v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendAnyJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case float32:
		return refFloat(dst, float64(v), 32)
	case float64:
		return refFloat(dst, v, 64)
	}
	return fmt.Append(dst, v), nil // an integer
}

// BenchmarkMsgpackDecoders decodes the same messages with cdclog's
// hand-written decoder, with a decoder on the msgpack library's token API
// (refDecoder) and with msgpack.Unmarshal into a struct: the measurement
// behind keeping the hand-written one (see the package documentation).
func BenchmarkMsgpackDecoders(b *testing.B) {
	decoders := []struct {
		name   string
		decode func(b []byte, m *Message) error
	}{
		{"cdclog", func(b []byte, m *Message) error { _, err := ParseMsgpack(b, m); return err }},
		{"library-tokens", func() func([]byte, *Message) error {
			ref := newRefDecoder()
			return func(b []byte, m *Message) (err error) { *m, _, err = ref.decode(b); return err }
		}()},
		{"library-unmarshal", unmarshalMessage},
	}
	for _, tc := range []struct {
		name string
		m    Message
	}{{"update", benchUpdate}, {"update-object", benchObject}, {"progress", benchProgress}} {
		enc := msgpackOf(&tc.m)
		for _, d := range decoders {
			b.Run(tc.name+"/"+d.name, func(b *testing.B) {
				var m Message
				if err := d.decode(enc, &m); err != nil || !sameMessage(m, tc.m) {
					b.Fatalf("%s decodes %v as %v, %v", d.name, tc.m, m, err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := d.decode(enc, &m); err != nil {
						b.Fatal(err)
					}
				}
				reportRate(b, 1, len(enc))
			})
		}
	}
}
