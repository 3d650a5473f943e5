package cdc

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// jv is a JSON value for property tests, rendered two ways: canonically by
// an implementation independent of the package's, and noisily (keys
// shuffled, white space added, characters escaped at random).
type jv struct {
	kind    byte // 's' string, 'n' number, 'l' literal, 'a' array, 'o' object
	text    string
	items   []jv
	keys    []string
	numeric bool // the number text is what msgpack gives back unchanged
}

var jsonChars = rapid.OneOf(
	rapid.RuneFrom([]rune{'a', 'b', 'z', 'A', '0', ' ', '/'}),
	rapid.RuneFrom([]rune{'"', '\\', '\n', '\t', '\b', '\f', '\r', 0, 0x1f, 0x7f}),
	rapid.RuneFrom([]rune{'é', '€', '😀', '\u2028', '\ufeff', '\ufffd'}),
	rapid.Rune(),
)

func genString(t *rapid.T, label string) string {
	return rapid.StringOfN(jsonChars, 0, 6, -1).Draw(t, label)
}

// genNumber draws a number as msgpack would write it back (numeric), or
// any JSON number.
func genNumber(t *rapid.T) jv {
	switch rapid.IntRange(0, 3).Draw(t, "numkind") {
	case 0:
		return jv{kind: 'n', text: strconv.FormatInt(rapid.Int64().Draw(t, "int"), 10), numeric: true}
	case 1:
		return jv{kind: 'n', text: strconv.FormatUint(rapid.Uint64().Draw(t, "uint"), 10), numeric: true}
	case 2:
		f := rapid.Float64().Draw(t, "float")
		if math.IsInf(f, 0) || math.IsNaN(f) {
			f = 0.5
		}
		return jv{kind: 'n', text: strconv.FormatFloat(f, 'g', -1, 64), numeric: true}
	}
	return jv{kind: 'n', text: rapid.StringMatching(`-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?`).Draw(t, "numtext")}
}

func genValue(t *rapid.T, depth int) jv {
	max := 5
	if depth >= 4 {
		max = 2
	}
	switch rapid.IntRange(0, max).Draw(t, "kind") {
	case 0:
		return jv{kind: 's', text: genString(t, "str")}
	case 1:
		return genNumber(t)
	case 2:
		return jv{kind: 'l', text: rapid.SampledFrom([]string{"true", "false", "null"}).Draw(t, "lit")}
	case 3, 4:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		v := jv{kind: 'a'}
		for i := 0; i < n; i++ {
			v.items = append(v.items, genValue(t, depth+1))
		}
		return v
	}
	keys := rapid.SliceOfNDistinct(rapid.StringOfN(jsonChars, 0, 4, -1), 0, 4, rapid.ID[string]).Draw(t, "keys")
	v := jv{kind: 'o', keys: keys}
	for range keys {
		v.items = append(v.items, genValue(t, depth+1))
	}
	return v
}

// canonical renders v canonically: keys sorted by bytes, fewest escapes.
func (v jv) canonical(sb *strings.Builder) {
	switch v.kind {
	case 's':
		quoteCanon(sb, v.text)
	case 'n', 'l':
		sb.WriteString(v.text)
	case 'a':
		sb.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			it.canonical(sb)
		}
		sb.WriteByte(']')
	case 'o':
		order := make([]int, len(v.keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(v.keys[a], v.keys[b]) })
		sb.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				sb.WriteByte(',')
			}
			quoteCanon(sb, v.keys[k])
			sb.WriteByte(':')
			v.items[k].canonical(sb)
		}
		sb.WriteByte('}')
	}
}

func quoteCanon(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\b':
			sb.WriteString(`\b`)
		case r == '\f':
			sb.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
}

// noisy renders v with its keys shuffled, white space everywhere and
// characters escaped at random.
func (v jv) noisy(t *rapid.T, sb *strings.Builder) {
	ws := func() { sb.WriteString(rapid.SampledFrom([]string{"", "", " ", "\t", "\r\n  "}).Draw(t, "ws")) }
	ws()
	switch v.kind {
	case 's':
		quoteNoisy(t, sb, v.text)
	case 'n', 'l':
		sb.WriteString(v.text)
	case 'a':
		sb.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				sb.WriteByte(',')
			}
			it.noisy(t, sb)
		}
		ws()
		sb.WriteByte(']')
	case 'o':
		order := make([]int, len(v.keys))
		for i := range order {
			order[i] = i
		}
		order = rapid.Permutation(order).Draw(t, "order")
		sb.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			quoteNoisy(t, sb, v.keys[k])
			ws()
			sb.WriteByte(':')
			v.items[k].noisy(t, sb)
		}
		ws()
		sb.WriteByte('}')
	}
	ws()
}

func quoteNoisy(t *rapid.T, sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		escape := r < 0x20 || r == '"' || r == '\\' || rapid.IntRange(0, 3).Draw(t, "esc") == 0
		switch {
		case !escape:
			sb.WriteRune(r)
		case r == '/' && rapid.Bool().Draw(t, "slash"):
			sb.WriteString(`\/`)
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(sb, `\u%04X\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(sb, `\u%04X`, r)
		}
	}
	sb.WriteByte('"')
}

func render(v jv) string {
	var sb strings.Builder
	v.canonical(&sb)
	return sb.String()
}

func TestPropertyCanonicalIgnoresKeyOrderWhiteSpaceAndEscapes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(t, 0)
		want := render(v)
		var sb strings.Builder
		v.noisy(t, &sb)
		noisy := sb.String()
		got, err := AppendCanonical(nil, []byte(noisy))
		if err != nil {
			t.Fatalf("AppendCanonical(%q): %v", noisy, err)
		}
		if string(got) != want {
			t.Fatalf("AppendCanonical(%q)\n = %q\nwant %q", noisy, got, want)
		}
		if !IsCanonical(got) {
			t.Fatalf("IsCanonical(%q) = false", got)
		}
		again, err := AppendCanonical(nil, got)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("not idempotent: %q then %q (%v)", got, again, err)
		}
	})
}

// msgpackNormal reports whether msgpack gives v back as the same text.
func (v jv) msgpackNormal() bool {
	if v.kind == 'n' {
		return v.numeric
	}
	for _, it := range v.items {
		if !it.msgpackNormal() {
			return false
		}
	}
	return true
}

func genMessage(t *rapid.T, msgpackSafe bool) Message {
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		v := genValue(t, 0)
		for msgpackSafe && !v.msgpackNormal() {
			v = genValue(t, 0)
		}
		diff := rapid.Int64().Filter(func(d int64) bool { return d != 0 }).Draw(t, "diff")
		return NewUpdate([]byte(render(v)), rapid.Uint64().Draw(t, "time"), diff)
	case 1:
		return genProgress(t)
	}
	return NewFinish(rapid.Uint64().Draw(t, "time"))
}

func genProgress(t *rapid.T) Message {
	lower := rapid.OneOf(rapid.Uint64Range(0, 100), rapid.Uint64()).Draw(t, "lower")
	p := Progress{Lower: lower}
	if lower == MaxTime || rapid.IntRange(0, 4).Draw(t, "unbounded") == 0 {
		p.Unbounded = true
	} else {
		p.Upper = rapid.Uint64Range(lower+1, min(MaxTime, lower+rapid.Uint64Range(1, 50).Draw(t, "span"))).Draw(t, "upper")
	}
	times := rapid.SliceOfNDistinct(rapid.Uint64Range(lower, p.Last()), 0, 6, rapid.ID[uint64]).Draw(t, "times")
	slices.Sort(times)
	for _, tm := range times {
		p.Counts = append(p.Counts, Count{Time: tm, Count: rapid.Uint64Range(1, MaxTime).Draw(t, "count")})
	}
	return Message{Kind: KindProgress, Progress: p}
}

func TestPropertyMessagesRoundTripThroughEveryCodec(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage(t, true)
		if err := m.Validate(); err != nil {
			t.Fatalf("generated an invalid message %v: %v", m, err)
		}
		var got Message
		if err := ParseJSON(AppendJSON(nil, &m), &got); err != nil || !sameMessage(m, got) {
			t.Fatalf("JSON: %v became %v (%v)", m, got, err)
		}
		if !parseJSONFast(AppendJSON(nil, &m), &got, nil) {
			t.Fatalf("the fast path refuses cdclog's own %s", AppendJSON(nil, &m))
		}
		if _, err := ParseMsgpack(msgpackOf(&m), &got); err != nil || !sameMessage(m, got) {
			t.Fatalf("msgpack: %v became %v (%v)", m, got, err)
		}
		if _, err := ParseBinary(AppendBinary(nil, &m), &got); err != nil || !sameMessage(m, got) {
			t.Fatalf("binary: %v became %v (%v)", m, got, err)
		}
	})
}

func TestPropertyStreamsRoundTripThroughWriterAndReader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Message { return genMessage(t, true) }), 0, 20).Draw(t, "msgs")
		format := rapid.SampledFrom([]Format{JSONL, Msgpack}).Draw(t, "format")
		var out bytes.Buffer
		w := NewWriter(&out, format)
		for i := range msgs {
			if err := w.Write(&msgs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		var src io.Reader = &out
		if rapid.Bool().Draw(t, "bytewise") {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src, format, "s")
		for i := 0; ; i++ {
			var m Message
			err := r.Next(&m)
			if err == io.EOF {
				if i != len(msgs) {
					t.Fatalf("read %d of %d messages", i, len(msgs))
				}
				return
			}
			if err != nil || i >= len(msgs) || !sameMessage(m, msgs[i]) {
				t.Fatalf("message %d: %v (%v)", i, m, err)
			}
		}
	})
}

func TestPropertyParseJSONFastPathAgreesWithGeneralDecoder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage(t, false)
		line := AppendJSON(nil, &m)
		// Mutate one byte now and then, to probe the fast path's refusals.
		if rapid.Bool().Draw(t, "mutate") && len(line) > 0 {
			i := rapid.IntRange(0, len(line)-1).Draw(t, "at")
			line[i] = rapid.SampledFrom([]byte(`{}[]":,-.0123456789e ax`)).Draw(t, "byte")
		}
		var fast, general Message
		if parseJSONFast(line, &fast, nil) {
			if err := parseJSONGeneral(line, &general); err != nil || !sameMessage(fast, general) {
				t.Fatalf("%s: fast %v, general %v (%v)", line, fast, general, err)
			}
		}
		if !utf8.Valid(line) {
			return
		}
	})
}
