package recovery

import "maps"

// Cursors returns every producer cursor of the last commit, by name (see
// Request.Cursor): input positions such as a file's offset or a broker
// source's partitions, and what other producers recorded (a broker sink's
// acknowledged record). The values are the producers' own encodings; the
// map is a copy.
func (r *Reader) Cursors() map[string][]byte {
	return maps.Clone(r.cp.Cursors)
}

// Cursors returns every producer cursor committed so far, as
// Reader.Cursors does; the map is a copy.
func (p *Processor) Cursors() map[string][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.committed.Cursors)
}
