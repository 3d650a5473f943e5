package cdc

import "fmt"

// Format is a wire format for a stream of messages. The zero Format is
// JSON Lines.
type Format uint8

// The supported formats.
const (
	JSONL Format = iota
	Msgpack
)

// String returns the name used on the command line.
func (f Format) String() string {
	switch f {
	case JSONL:
		return "jsonl"
	case Msgpack:
		return "msgpack"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// Name returns the format's name for people: "JSON Lines" or "msgpack".
func (f Format) Name() string {
	if f == JSONL {
		return "JSON Lines"
	}
	return f.String()
}

// ParseFormat accepts "jsonl" (or "json") and "msgpack".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "jsonl", "json", "":
		return JSONL, nil
	case "msgpack", "mp":
		return Msgpack, nil
	}
	return 0, fmt.Errorf("unknown format %q (want jsonl or msgpack)", s)
}
