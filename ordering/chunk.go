package ordering

import (
	"bytes"
	"errors"
	"io"
)

// A chunk is a run of whole lines of one shard, read and parsed ahead of
// the merge by the shard's reader goroutine: for each line that is not
// blank, the record and its key, or why the line is not a usable record.
// The merge hands a chunk back once it is past it, and the reader fills it
// again, so a shard's memory is its few chunks whatever its length.
type chunk struct {
	buf  []byte  // the bytes read; entries point into it
	ents []entry // the lines, in order
	// end is set on a shard's last chunk: io.EOF, or the *ReadError that
	// stopped the reading, to be met after ents.
	end error
}

// An entry is one line of a chunk.
type entry struct {
	rec    []byte // the record: the line less its terminator (and BOM)
	key    mergeKey
	line   int64
	bad    *LineError // set when the line is not a usable record
	disord bool       // key below the shard's previous record's
}

// chunkSizeFor returns the read size of each chunk for a merge of n
// shards: 256 KiB (about 1,300 records of 200 bytes, enough that the
// hand-over costs nothing), less when there are more than four shards, so
// that a merge's chunks stay near chunkBudget in all.
func chunkSizeFor(n int) int {
	const most, least = 256 << 10, 16 << 10
	size := chunkBudget / (chunksPerShard * max(n, 1))
	return min(most, max(least, size))
}

// chunkBudget is what the chunks of all shards may take together, as long
// as that leaves each shard at least 16 KiB a chunk. Small, so that the
// merge's working set stays in the caches: with 16 shards, 64 KiB chunks
// took less CPU time than 256 KiB ones (the merging goroutine's loads of
// entries and records were its largest cost), and a 52 MiB peak RSS fell
// to 21 MiB.
const chunkBudget = 4 << 20

// chunksPerShard is how many chunks each shard has: one being merged, one
// being filled, and two ready, so that a reader runs ahead of the merge.
const chunksPerShard = 4

// maxEmptyReads is how many Read calls in a row may return nothing before
// the shard is taken to be broken, as in bufio.
const maxEmptyReads = 100

// shardReader splits one shard into chunks of lines, as JSONLReader reads
// them: LF or CRLF line ends, a byte order mark dropped before the first
// line, blank lines skipped but counted, lines up to MaxLineSize.
type shardReader struct {
	r     io.Reader
	name  string
	size  int    // the read size of a chunk
	line  int64  // lines read so far
	off   int64  // byte offset of the next line's first byte
	carry []byte // the start of a line whose end is not read yet
	// A line longer than MaxLineSize is skipped to its end: head keeps
	// its first bytes for the LineError.
	skipping bool
	head     []byte
	longOff  int64 // the byte offset of the line being skipped
	// prev is the key of the shard's last record, for the order check;
	// its digits are copied to prevSeq when its chunk is handed over.
	prev    mergeKey
	hasPrev bool
	prevSeq []byte
	empties int // Read calls in a row that returned nothing
	keys    keyScanner
}

func newShardReader(s Shard, size int) *shardReader {
	return &shardReader{r: s.R, name: s.Name, size: size}
}

// fill reads into c at least one line, or up to the shard's end or read
// error (then c.end is set).
func (r *shardReader) fill(c *chunk) {
	if cap(c.buf) < r.size || cap(c.buf) > 4*r.size {
		c.buf = make([]byte, 0, max(r.size, 2*len(r.carry))) // new, or shrunk after a long line
	}
	c.buf = append(c.buf[:0], r.carry...)
	r.carry = r.carry[:0]
	c.ents, c.end = c.ents[:0], nil
	from := 0 // c.buf[from:] is not yet split into lines
	for len(c.ents) == 0 && c.end == nil {
		if len(c.buf) == cap(c.buf) {
			if from > 0 { // blank lines read: no entry points into buf yet
				c.buf = c.buf[:copy(c.buf, c.buf[from:])]
				from = 0
			} else { // one line fills the buffer
				c.buf = growLine(c.buf)
			}
		}
		n, err := r.r.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		from = r.split(c, from)
		switch {
		case errors.Is(err, io.EOF):
			r.last(c, from)
			c.end = io.EOF
			return
		case err != nil:
			c.end = &ReadError{Source: r.name, Line: r.line, Err: err}
			return
		case n > 0:
			r.empties = 0
		default:
			if r.empties++; r.empties == maxEmptyReads {
				c.end = &ReadError{Source: r.name, Line: r.line, Err: io.ErrNoProgress}
				return
			}
		}
	}
	r.carry = append(r.carry, c.buf[from:]...)
	r.keepPrev()
}

// growLine returns buf with room for more of the line that fills it,
// doubling, up to a little more than the longest line accepted, a byte
// order mark before it included (split drops a line longer than that as it
// reads it).
func growLine(buf []byte) []byte {
	grown := make([]byte, len(buf), min(2*cap(buf), len(bom)+MaxLineSize+len("\r\n")+1))
	copy(grown, buf)
	return grown
}

// split adds to c the lines that end in c.buf[from:] and returns where the
// first unfinished one starts. A line too long to keep is dropped as it
// goes, its first bytes kept in r.head.
func (r *shardReader) split(c *chunk, from int) int {
	for {
		if !r.skipping && r.line > 0 {
			if next, ok := r.addShaped(c, from); ok {
				from = next
				continue
			}
		}
		nl := bytes.IndexByte(c.buf[from:], '\n')
		if nl < 0 {
			break
		}
		end := from + nl
		if r.skipping {
			r.skipping = false
			r.tooLong(c, r.longOff)
		} else {
			r.add(c, c.buf[from:end])
		}
		r.off += int64(end + 1 - from)
		from = end + 1
	}
	if rest := len(c.buf) - from; r.skipping || rest > MaxLineSize+len("\r\n")+bomRoom(r.line+1, c.buf[from:]) {
		// Too long (or already known to be): keep the head, drop the rest.
		if !r.skipping {
			r.head = append(r.head[:0], c.buf[from:from+tooLongPrefix]...)
			r.skipping, r.longOff = true, r.off
		}
		r.off += int64(rest)
		c.buf = c.buf[:from]
	}
	return from
}

// last adds the shard's last line, which has no line end.
func (r *shardReader) last(c *chunk, from int) {
	switch {
	case r.skipping:
		r.skipping = false
		r.tooLong(c, r.longOff)
	case from < len(c.buf):
		r.add(c, c.buf[from:])
		r.off += int64(len(c.buf) - from)
	}
}

// tooLong adds the line at byte offset off, too long to keep, as a
// LineError with its first bytes (r.head).
func (r *shardReader) tooLong(c *chunk, off int64) {
	r.line++
	raw := r.head
	if r.line == 1 && bytes.HasPrefix(raw, bom) {
		raw, off = raw[len(bom):], off+int64(len(bom))
	}
	c.ents = append(c.ents, entry{line: r.line, bad: &LineError{Source: r.name, Line: r.line, Offset: off,
		Raw: bytes.Clone(raw), Err: lineTooLong(r.line)}})
}

// add adds one line, given without its '\n'.
func (r *shardReader) add(c *chunk, line []byte) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > MaxLineSize+bomRoom(r.line+1, line) {
		r.head = append(r.head[:0], line[:tooLongPrefix]...)
		r.tooLong(c, r.off)
		return
	}
	r.line++
	off := r.off
	if r.line == 1 && bytes.HasPrefix(line, bom) {
		line, off = line[len(bom):], off+int64(len(bom))
	}
	if len(line) == 0 || line[0] != '{' && len(bytes.Trim(line, " \t\r")) == 0 {
		return // blank
	}
	c.ents = append(c.ents, entry{rec: line, line: r.line})
	e := &c.ents[len(c.ents)-1]
	if !r.keys.key(line, &e.key) {
		slow, err := recordKeySlow(line)
		if err != nil {
			e.bad = &LineError{Source: r.name, Line: r.line, Offset: off, Raw: line, Err: err}
			return
		}
		e.key = mergeKeyOf(rawKeyOf(slow))
	}
	e.disord = r.hasPrev && e.key.compare(&r.prev) < 0
	r.prev, r.hasPrev = e.key, true
}

// addShaped adds the line at from if it is a record of the shard's first
// shape, found and checked in one pass; it returns where the next line
// starts. Otherwise it adds nothing, and split finds the line itself.
func (r *shardReader) addShaped(c *chunk, from int) (next int, ok bool) {
	c.ents = append(c.ents, entry{})
	e := &c.ents[len(c.ents)-1]
	end, next, ok := r.keys.lineAt(c.buf, from, &e.key)
	if !ok || end-from > MaxLineSize {
		c.ents = c.ents[:len(c.ents)-1]
		return 0, false
	}
	r.line++
	r.off += int64(next - from)
	e.rec, e.line = c.buf[from:end], r.line
	e.disord = r.hasPrev && e.key.compare(&r.prev) < 0
	r.prev, r.hasPrev = e.key, true
	return next, true
}

// keepPrev copies the last record's digits out of the chunk about to be
// handed over, for comparing the next chunk's first record.
func (r *shardReader) keepPrev() {
	if r.hasPrev {
		r.prevSeq = append(r.prevSeq[:0], r.prev.seq...)
		r.prev.seq = r.prevSeq
	}
}

// run fills chunks from free and sends them on out until the shard's last
// chunk, or until stop is closed.
func (r *shardReader) run(free <-chan *chunk, out chan<- *chunk, stop <-chan struct{}) {
	for {
		var c *chunk
		select {
		case c = <-free:
		case <-stop:
			return
		}
		r.fill(c)
		select {
		case out <- c:
		case <-stop:
			return
		}
		if c.end != nil {
			return
		}
	}
}
