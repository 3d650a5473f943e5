package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// TestInputInTheOtherFormatGetsAHintAtTheFormatFlags: msgpack read as
// JSON Lines ("invalid character byte 0x81") and JSON Lines read as
// msgpack ("message is not a map but an integer") said nothing of the
// format. Every command that reads a CDC stream now says which format the
// input looks like and which flag reads it, and exits 1.
func TestInputInTheOtherFormatGetsAHintAtTheFormatFlags(t *testing.T) {
	dir := t.TempDir()
	jsonl, mp := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "in.mp")
	writeTestStream(t, jsonl, cdc.JSONL, streamSpec{Seed: 1, Times: 20, Keys: 3})
	writeTestStream(t, mp, cdc.Msgpack, streamSpec{Seed: 1, Times: 20, Keys: 3})
	msgpackHint := []string{"it looks like msgpack, not JSON Lines", "(to read msgpack, give --in-format msgpack, or --format msgpack for input and output)"}
	jsonHint := []string{"it looks like JSON Lines, not msgpack", "(to read JSON Lines, give --in-format jsonl, or --format jsonl for input and output)"}
	for _, cmd := range [][]string{
		{"demangle"}, {"replay"}, {"convert"}, {"mangle"}, {"ingest", "--db", filepath.Join(dir, "a.db")},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			args := append(append([]string{}, cmd...), mp)
			r := expectFailure(t, exitFailure, nil, args, append(msgpackHint, mp+":1: ")...)
			if n := strings.Count(r.Stderr, "looks like"); n != 1 {
				t.Errorf("the hint is given %d times:\n%s", n, r.Stderr)
			}
			for _, flag := range []string{"--in-format", "--format"} {
				args := append(append([]string{flag, "msgpack"}, cmd...), jsonl)
				expectFailure(t, exitFailure, nil, args, append(jsonHint, jsonl+": byte 0: ")...)
			}
		})
	}
}

// TestInputInTheOtherFormatUnderSkipSaysSoAndStops: under --on-error
// skip, msgpack read as JSON Lines is rejected line by line with the
// hint in each report, and JSON Lines read as msgpack stops at its first
// byte (it used to be skipped one byte at a time).
func TestInputInTheOtherFormatUnderSkipSaysSoAndStops(t *testing.T) {
	dir := t.TempDir()
	jsonl, mp := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "in.mp")
	writeTestStream(t, jsonl, cdc.JSONL, streamSpec{Seed: 1, Times: 20, Keys: 3})
	writeTestStream(t, mp, cdc.Msgpack, streamSpec{Seed: 1, Times: 20, Keys: 3})
	r := mustRunBin(t, nil, "demangle", "--on-error", "skip", mp)
	if !strings.Contains(r.Stderr, "rejected input") || !strings.Contains(r.Stderr, "it looks like msgpack, not JSON Lines") {
		t.Errorf("msgpack skipped as JSON Lines without saying what it looks like:\n%s", r.Stderr)
	}
	r = expectFailure(t, exitFailure, nil, []string{"--in-format", "msgpack", "demangle", "--on-error", "skip", jsonl},
		jsonl+": byte 0: ", "it looks like JSON Lines, not msgpack", "--in-format jsonl")
	if n := strings.Count(r.Stderr, "rejected input"); n != 0 {
		t.Errorf("%d bytes of JSON rejected one by one before stopping:\n%s", n, r.Stderr)
	}
}
