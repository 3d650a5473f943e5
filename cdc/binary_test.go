package cdc

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

var binaryMessages = []Message{
	update(`"k3"`, 123, -1),
	update(`{"a":[1.50,"\n",null],"b":1E400}`, MaxTime, math.MinInt64),
	update(`"`+strings.Repeat("x", 300)+`"`, 0, math.MaxInt64),
	NewProgress(5, 8, Count{5, 1}, Count{7, 2}),
	NewProgress(0, MaxTime),
	unbounded(7, Count{MaxTime, 3}),
	unbounded(0),
	NewFinish(1 << 33),
}

func TestBinaryRoundTripIsLossless(t *testing.T) {
	var buf []byte
	for i := range binaryMessages {
		buf = AppendBinary(buf, &binaryMessages[i])
	}
	for i, want := range binaryMessages {
		var m Message
		n, err := ParseBinary(buf, &m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !sameMessage(m, want) {
			t.Errorf("round trip changed %v to %v", want, m)
		}
		if again := AppendBinary(nil, &m); !bytes.Equal(again, buf[:n]) {
			t.Errorf("re-encoding differs: % x vs % x", again, buf[:n])
		}
		buf = buf[n:]
	}
	if len(buf) != 0 {
		t.Errorf("%d bytes left over", len(buf))
	}
}

func TestBinaryLayout(t *testing.T) {
	tests := []struct {
		m    Message
		want []byte
	}{
		{update(`"k"`, 7, -1), []byte{0x94, 0x01, 0xc4, 0x03, '"', 'k', '"', 0x07, 0xff}},
		{NewProgress(5, 300, Count{7, 2}), []byte{0x94, 0x02, 0x05, 0xcd, 0x01, 0x2c, 0x92, 0x07, 0x02}},
		{unbounded(5), []byte{0x94, 0x02, 0x05, 0xc0, 0x90}},
		{NewFinish(7), []byte{0x92, 0x03, 0x07}},
	}
	for _, tc := range tests {
		if got := AppendBinary(nil, &tc.m); !bytes.Equal(got, tc.want) {
			t.Errorf("AppendBinary(%v) = % x, want % x", tc.m, got, tc.want)
		}
	}
}

func TestParseBinaryDataAliasesInput(t *testing.T) {
	m := update(`"k"`, 7, 1)
	b := AppendBinary(nil, &m)
	var got Message
	if _, err := ParseBinary(b, &got); err != nil {
		t.Fatal(err)
	}
	if &got.Update.Data[0] != &b[4] || cap(got.Update.Data) != 3 {
		t.Error("data does not alias the input with a capped capacity")
	}
}

func TestParseBinaryRejectsDamage(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"not an array", []byte{0x81}, "not an array of a kind and fields"},
		{"unknown kind", []byte{0x92, 0x09, 0x00}, "unknown kind 9"},
		{"wrong field count", []byte{0x93, 0x01, 0xc4, 0x01, '1', 0x01}, "update has 2 fields, want 3"},
		{"data not bin", []byte{0x94, 0x01, 0xa1, '1', 0x01, 0x01}, "update data is not bin"},
		{"data not canonical", []byte{0x94, 0x01, 0xc4, 0x03, '[', ' ', ']', 0x01, 0x01}, "update data is not canonical JSON"},
		{"empty data", []byte{0x94, 0x01, 0xc4, 0x00, 0x01, 0x01}, "update data is not canonical JSON"},
		{"zero diff", []byte{0x94, 0x01, 0xc4, 0x01, '1', 0x01, 0x00}, "update diff is not a non-zero int64"},
		{"negative time", []byte{0x94, 0x01, 0xc4, 0x01, '1', 0xff, 0x01}, "update time is not an unsigned integer"},
		{"upper not above lower", []byte{0x94, 0x02, 0x05, 0x05, 0x90}, "progress upper 5 is not above lower 5"},
		{"odd counts", []byte{0x94, 0x02, 0x05, 0x08, 0x91, 0x05}, "not an array of time, count pairs"},
		{"zero count", []byte{0x94, 0x02, 0x05, 0x08, 0x92, 0x05, 0x00}, "count for time 5 is zero"},
		{"unsorted counts", []byte{0x94, 0x02, 0x05, 0x08, 0x94, 0x06, 0x01, 0x05, 0x01}, "counts are not sorted"},
		{"count outside", []byte{0x94, 0x02, 0x05, 0x08, 0x92, 0x09, 0x01}, "count for time 9 is outside [5, 8)"},
		{"float time", []byte{0x92, 0x03, 0xcb, 0x40, 0x1c, 0, 0, 0, 0, 0, 0}, "finish time is not an unsigned integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			n, err := ParseBinary(tc.in, &m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseBinary(% x) = %v, want error containing %q", tc.in, err, tc.want)
			}
			if n != 0 || !reflect.DeepEqual(m, Message{}) {
				t.Errorf("on error: n = %d, m = %v", n, m)
			}
		})
	}
}

func TestParseBinaryReportsTruncation(t *testing.T) {
	for i := range binaryMessages {
		b := AppendBinary(nil, &binaryMessages[i])
		for cut := 0; cut < len(b); cut++ {
			var m Message
			if _, err := ParseBinary(b[:cut], &m); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%v cut at %d: err = %v, want io.ErrUnexpectedEOF", binaryMessages[i], cut, err)
			}
		}
	}
}

func TestBinaryKindPeeksAtTheKind(t *testing.T) {
	for _, m := range []Message{NewUpdate([]byte(`"a"`), 5, 1), NewProgress(1, 9, Count{Time: 3, Count: 2}), NewFinish(4)} {
		if got := BinaryKind(AppendBinary(nil, &m)); got != m.Kind {
			t.Errorf("BinaryKind of %v = %v", m, got)
		}
	}
	for _, b := range [][]byte{nil, {0x94}, {0xc0, 0x01}, {0x94, 0xcc}} {
		if got := BinaryKind(b); got != 0 {
			t.Errorf("BinaryKind(%x) = %v, want 0", b, got)
		}
	}
}

// appendBinaryByField is AppendBinary as it was first written, field by
// field with the msgpack appenders: the reference the in-place encoder
// must match byte for byte.
func appendBinaryByField(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		dst = append(dst, 0x94, byte(KindUpdate))
		dst = appendMpHeader(dst, mpBin, len(m.Update.Data))
		dst = append(dst, m.Update.Data...)
		dst = appendMpUint(dst, m.Update.Time)
		return appendMpInt(dst, m.Update.Diff)
	case KindProgress:
		p := &m.Progress
		dst = append(dst, 0x94, byte(KindProgress))
		dst = appendMpUint(dst, p.Lower)
		if p.Unbounded {
			dst = append(dst, 0xc0)
		} else {
			dst = appendMpUint(dst, p.Upper)
		}
		dst = appendMpHeader(dst, mpArray, 2*len(p.Counts))
		for _, c := range p.Counts {
			dst = appendMpUint(dst, c.Time)
			dst = appendMpUint(dst, c.Count)
		}
		return dst
	case KindFinish:
		dst = append(dst, 0x92, byte(KindFinish))
		return appendMpUint(dst, m.Finish.Time)
	}
	return append(dst, 0x91, 0x00)
}

func TestAppendBinaryMatchesTheFieldByFieldEncoding(t *testing.T) {
	uints := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64}
	ints := []int64{0, 1, -1, -32, -33, math.MinInt8, math.MinInt8 - 1, math.MinInt16, math.MinInt16 - 1,
		math.MinInt32, math.MinInt32 - 1, math.MinInt64, math.MaxInt64}
	var msgs []Message
	for _, n := range []int{0, 1, 255, 256, 65535, 65536} {
		for k, v := range ints {
			msgs = append(msgs, update(strings.Repeat("1", n), uints[k%len(uints)], v))
		}
	}
	for _, u := range uints {
		msgs = append(msgs, Message{Kind: KindFinish, Finish: Finish{Time: u}})
		for _, n := range []int{0, 1, 7, 8, 32767, 32768} {
			counts := make([]Count, n)
			for i := range counts {
				counts[i] = Count{Time: uints[i%len(uints)], Count: u}
			}
			p := Message{Kind: KindProgress, Progress: Progress{Lower: u, Upper: uints[n%len(uints)], Counts: counts}}
			msgs = append(msgs, p)
			p.Progress.Unbounded = true
			msgs = append(msgs, p)
		}
	}
	msgs = append(msgs, Message{})
	for i := range msgs {
		prefix := []byte("prefix")
		want := appendBinaryByField(bytes.Clone(prefix), &msgs[i])
		for _, dst := range [][]byte{bytes.Clone(prefix), append(make([]byte, 0, 1<<20), prefix...)} {
			if got := AppendBinary(dst, &msgs[i]); !bytes.Equal(got, want) {
				t.Fatalf("message %d (kind %d): %d bytes, want %d", i, msgs[i].Kind, len(got), len(want))
			}
		}
	}
}
