package cdc

import "fmt"

// CheckMsgpackBounds reports whether b begins with one whole msgpack value
// whose arrays and maps claim no more elements than b has bytes left for
// them (every value takes a byte at least). A decoder that allocates by
// the counts it reads, as msgpack.Unmarshal does, then allocates in
// proportion to len(b): records decoded that way are checked first, so
// that damaged bytes give an error instead of an allocation of many
// gigabytes, which no recover catches (the runtime's "out of memory").
// Unlike a message, a record may be longer than MaxMessageSize.
func CheckMsgpackBounds(b []byte) error {
	d := mpDecoder{b: b, record: true}
	at, _, err := d.skip(1)
	if isTruncated(err) {
		return fmt.Errorf("msgpack: the bytes end inside the value at byte %d", at)
	}
	if err != nil {
		return fmt.Errorf("msgpack: %w", err)
	}
	return nil
}
