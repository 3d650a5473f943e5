package cdc

import (
	"errors"
	"strings"
	"testing"
)

// TestAStreamInTheOtherFormatIsSaidToBeOne: msgpack read as JSON Lines and
// JSON Lines read as msgpack failed with errors about stray bytes and
// nothing about the format. The error now says which format the message
// looks like (WrongFormat, LooksLike), however the input arrives; JSON
// read as msgpack stops at once (it is a run of small integers to msgpack,
// which had one error per byte under skip).
func TestAStreamInTheOtherFormatIsSaidToBeOne(t *testing.T) {
	m := update(`{"a":1}`, 1, 1)
	mpMsg := string(msgpackOf(&m))
	tests := []struct {
		name  string
		in    string
		read  Format
		fatal bool
		looks Format
	}{
		{"msgpack read as JSON Lines", mpMsg + mpMsg, JSONL, false, Msgpack},
		{"msgpack progress read as JSON Lines", string(msgpackOf(&Message{Kind: KindProgress, Progress: Progress{Lower: 1, Upper: 2}})), JSONL, false, Msgpack},
		{"JSON Lines read as msgpack", lineA + "\n" + lineB + "\n", Msgpack, true, JSONL},
		{"JSON Lines with spaces read as msgpack", "  { \"finish\": {\"time\": 2}}\n", Msgpack, true, JSONL},
		{"JSON Lines with a BOM read as msgpack", "\xef\xbb\xbf" + lineB + "\n", Msgpack, true, JSONL},
	}
	for _, tc := range tests {
		for name, wrap := range readers {
			r := NewReader(wrap(strings.NewReader(tc.in)), tc.read, "in")
			var msg Message
			err := nextMsg(r, &msg)
			var de *DecodeError
			if !errors.As(err, &de) || !de.WrongFormat || de.LooksLike != tc.looks || de.Fatal != tc.fatal {
				t.Errorf("%s, %s: %v (%+v), want a decode error saying it looks like %s", tc.name, name, err, de, tc.looks.Name())
				continue
			}
			if want := "; it looks like " + tc.looks.Name() + ", not " + tc.read.Name(); !strings.HasSuffix(de.Reason, want) {
				t.Errorf("%s, %s: reason %q, want it to end %q", tc.name, name, de.Reason, want)
			}
			if de.Pos.Offset != 0 || r.Offset() != 0 && tc.fatal {
				t.Errorf("%s, %s: at byte %d, offset %d after; want 0", tc.name, name, de.Pos.Offset, r.Offset())
			}
		}
	}
}

// TestBadInputInItsOwnFormatIsNotSaidToBeInTheOther: the hint is given
// only for a message shaped like one of the other format.
func TestBadInputInItsOwnFormatIsNotSaidToBeInTheOther(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		read Format
	}{
		{"malformed JSON", `{"update":` + "\n", JSONL},
		{"a binary line that is no msgpack message", "\x81\xa3abc\x01\n", JSONL},
		{"an integer in msgpack", "\x07", Msgpack},
		{"a msgpack string that starts with a brace", "\xa2{\"", Msgpack},
		{"white space only, then a brace and no quote", "  {x", Msgpack},
	} {
		r := NewReader(strings.NewReader(tc.in), tc.read, "in")
		var m Message
		err := r.Next(&m)
		var de *DecodeError
		if !errors.As(err, &de) || de.WrongFormat || strings.Contains(de.Reason, "looks like") {
			t.Errorf("%s: %v, want a decode error with no format hint", tc.name, err)
		}
	}
}

func TestLooksLike(t *testing.T) {
	for _, tc := range []struct {
		b                string
		msgpack          bool
		json, jsonNeedMo bool
	}{
		{b: "\x81\xa6update", msgpack: true},
		{b: "\x81\xa8progress", msgpack: true},
		{b: "\x81\xa6finish", msgpack: true},
		{b: "\xde\x00\x01\xd9\x06update", msgpack: true},
		{b: "\xdf\x00\x00\x00\x01\xa6update", msgpack: true},
		{b: "\x81\xa6updat"},
		{b: "\x80"},
		{b: "\x81\xa5other"},
		{b: "\x81"},
		{b: `{"update"`, json: true},
		{b: " \t\r\n{ \"", json: true},
		{b: "\xef\xbb\xbf{\"", json: true},
		{b: "", jsonNeedMo: true},
		{b: "\xef", jsonNeedMo: true},
		{b: "   {  ", jsonNeedMo: true},
		{b: strings.Repeat(" ", sniffLimit) + `{"`},
		{b: "{x"},
		{b: "[\""},
	} {
		if got := looksLikeMsgpack([]byte(tc.b)); got != tc.msgpack {
			t.Errorf("looksLikeMsgpack(%q) = %v", tc.b, got)
		}
		if json, more := looksLikeJSON([]byte(tc.b)); json != tc.json || more != tc.jsonNeedMo {
			t.Errorf("looksLikeJSON(%q) = %v, %v", tc.b, json, more)
		}
	}
}
