package cdc

import (
	"bytes"
	"fmt"
	"io"
	"testing"
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

func BenchmarkMsgpack(b *testing.B) { benchCodec(b, ParseMsgpack, AppendMsgpack) }

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
			buf = AppendMessage(buf, f, &m)
			i++
		}
		if i < n {
			m := NewProgress(t, t+1, Count{t, 4})
			buf = AppendMessage(buf, f, &m)
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
