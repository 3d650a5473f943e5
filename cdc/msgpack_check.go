package cdc

import (
	"errors"
	"fmt"
)

// CheckMsgpackBounds reports whether b begins with one whole msgpack value
// whose arrays and maps claim no more elements than b has bytes left for
// them (every value takes a byte at least). A decoder that allocates by
// the counts it reads, as msgpack.Unmarshal does, then allocates in
// proportion to len(b): records decoded that way are checked first, so
// that damaged bytes give an error instead of an allocation of many
// gigabytes, which no recover catches (the runtime's "out of memory").
func CheckMsgpackBounds(b []byte) error {
	d := mpDecoder{b: b}
	for pending := 1; pending > 0; pending-- {
		start := d.i
		family, n, err := d.header()
		if err == nil {
			switch family {
			case mpMap:
				n *= 2
				fallthrough
			case mpArray:
				// pending-1 values follow this one's header.
				if pending += n; pending-1 > len(b)-d.i {
					err = fmt.Errorf("byte %d: a container of %d values with %d bytes left", start, n, len(b)-d.i)
				}
			case mpStr, mpBin:
				_, err = d.bytes(n)
			default:
				err = d.skipScalar(b[start], start)
			}
		}
		if errors.Is(err, errTruncated) {
			return fmt.Errorf("msgpack: the bytes end inside the value at byte %d", start)
		}
		if err != nil {
			return fmt.Errorf("msgpack: %w", err)
		}
	}
	return nil
}
