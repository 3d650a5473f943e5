package recovery

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cdclog/cdclog/cdc"
	bolt "go.etcd.io/bbolt"
)

// sinkAllowance is how far past its committed size the output file may
// grow before the next checkpoint: each checkpoint sets the file's Limit
// to its size plus this, and a batch whose output would go past the Limit
// waits for a checkpoint that raises it (see sinkWriter). The pipeline
// holds three batches, about 1 MiB of output each at the default batch
// size with the generator's data, so at 16 MiB it never waits in
// practice; a batch that releases more than that costs one extra small
// commit.
const sinkAllowance = 16 << 20

// recoverSink reconciles the output file with the checkpoint before
// anything is written to it (the rules are in the package documentation,
// "The output file"): a file this database has written must still hold
// the bytes it committed, and what follows them is cut only when it is
// what an interrupted run can have left; a file it never wrote must be
// empty. Then the file receives every committed record it lacks, so that
// attaching a file late, or going back to one used before, still gives the
// whole clean stream.
func (p *Processor) recoverSink() error {
	s := p.opts.Sink
	size, err := s.Size()
	if err != nil {
		return fmt.Errorf("output file: %w", err)
	}
	format := p.opts.SinkFormat.String()
	p.cp.switchSink(p.opts.SinkName)
	cs := &p.cp.Sink
	if cs.Name == "" {
		if err := p.attachSink(size); err != nil {
			return err
		}
	} else {
		if cs.Format != format && cs.Size > 0 {
			return fmt.Errorf("output file %s was written as %s, not %s", cs.Name, cs.Format, format)
		}
		if cs.V == 0 {
			// Written before the checks existed: no checksum, limit or
			// inode, and the frontier is known only when the file holds
			// every record.
			cs.Chained, cs.Frontier, cs.Done = cs.Next == p.cp.NextOutput, p.cp.Frontier, p.cp.Done
		}
		if err := p.verifySink(size); err != nil {
			return err
		}
		cs.Format = format // the file holds nothing when it changes
	}
	if err := p.sinkTail.load(s, cs.Size); err != nil {
		return err
	}
	cs.V, cs.Inode = sinkStateVersion, inodeOf(s)
	return p.catchUpSink()
}

// maxSinkFiles is how many earlier output files the checkpoint
// remembers, the most recently left first kept: it is written with every
// commit, so it must stay small (about 100 bytes a file). Going back to a
// file forgotten this way finds it not written by this database: it must
// then be empty again.
const maxSinkFiles = 32

// switchSink makes name the current output file: the current one's state
// joins the other files', and name's own state, if it has one, leaves
// them.
func (cp *checkpoint) switchSink(name string) {
	if cp.Sink.Name == name {
		return
	}
	if cp.Sink.Name != "" {
		cp.Files = append(cp.Files, cp.Sink)
		if n := len(cp.Files) - maxSinkFiles; n > 0 {
			cp.Files = append(cp.Files[:0:0], cp.Files[n:]...)
		}
	}
	cp.Sink = sinkState{Next: 1}
	for i, f := range cp.Files {
		if f.Name == name {
			cp.Sink = f
			cp.Files = append(cp.Files[:i:i], cp.Files[i+1:]...)
			break
		}
	}
}

// inodeOf returns the sink's inode number, or 0 when it does not know it.
func inodeOf(s Sink) uint64 {
	if i, ok := s.(inoder); ok {
		return i.Inode()
	}
	return 0
}

// attachSink takes a file this database never wrote: it must be empty.
// The switch is committed before anything is written, so that a crash
// during the catch-up finds a file this database owns.
func (p *Processor) attachSink(size int64) error {
	name := p.opts.SinkName
	if size != 0 {
		return fmt.Errorf("%w: %s has %d bytes; give a new or empty file", ErrSinkForeign, name, size)
	}
	cs := &p.cp.Sink
	*cs = sinkState{Name: name, Format: p.opts.SinkFormat.String(), Next: 1, V: sinkStateVersion,
		Limit: sinkAllowance, Inode: inodeOf(p.opts.Sink)}
	if p.cp.NextOutput == 1 {
		// Nothing was released yet: the stream starts at the frontier.
		cs.Chained, cs.Frontier, cs.Done = true, p.cp.Frontier, p.cp.Done
	}
	if err := p.db.Update(func(tx *bolt.Tx) error { return p.cp.save(tx) }); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// regenerate says how to recover from a file that cannot be used.
func (p *Processor) regenerate() string {
	return "move it aside and " + p.replayCommand()
}

// replayCommand says how to write the committed output anew.
func (p *Processor) replayCommand() string {
	flag := ""
	if p.opts.SinkFormat == cdc.Msgpack {
		flag = " --format msgpack"
	}
	return fmt.Sprintf("regenerate it with 'cdclog%s replay --db %s > %s', or write to another file",
		flag, p.db.Path(), p.opts.SinkName)
}

// verifySink checks a file this database has written and cuts what
// follows the committed bytes, if that is what an interrupted run can
// have left.
func (p *Processor) verifySink(size int64) error {
	s, cs := p.opts.Sink, &p.cp.Sink
	if size < cs.Size {
		if c, ok := s.(creator); ok && c.Created() {
			return fmt.Errorf("%w: %s is missing (%d bytes were committed to it); restore it, or %s",
				ErrSinkShort, cs.Name, cs.Size, p.replayCommand())
		}
		return fmt.Errorf("%w: %s has %d bytes, %d were committed; restore it, or %s",
			ErrSinkShort, cs.Name, size, cs.Size, p.regenerate())
	}
	if err := p.checkCommitted(); err != nil {
		return err
	}
	if cs.V < 2 {
		// Written before the file had a checksum of its own: take it as
		// it is, which the tail's CRC and the record checks vouch for.
		crc, err := fileCRC(s, cs.Size)
		if err != nil {
			return err
		}
		cs.FileCRC = crc
	}
	ino := inodeOf(s)
	replaced := cs.Inode != 0 && ino != 0 && ino != cs.Inode
	from := cs.Size
	if size > cs.Size {
		if err := p.adoptCommitted(size); err != nil {
			return err
		}
		if cs.Size > from {
			// The bytes taken were written by a run that was killed, or by
			// replay through a shell's redirection: nothing says they were
			// fsynced, and the checkpoint about to be committed claims them
			// durable. Without this a power loss after that commit leaves
			// the file shorter than its committed size (ErrSinkShort).
			if err := s.Sync(); err != nil {
				return fmt.Errorf("fsync output file: %w", err)
			}
		}
	}
	if size > cs.Size {
		if err := p.checkExcess(size, replaced, ino); err != nil {
			return err
		}
	}
	if cs.Size > from {
		p.log.Info("output file already holds committed records past its recorded size: kept", "file", cs.Name, "bytes_kept", cs.Size-from, "next_record", cs.Next)
	}
	if size > cs.Size {
		p.log.Info("cutting uncommitted output", "file", cs.Name, "bytes", size-cs.Size)
		if err := s.Truncate(cs.Size); err != nil {
			return fmt.Errorf("cut output file back to %d bytes: %w", cs.Size, err)
		}
	} else if replaced {
		p.log.Info("output file was replaced by a copy that holds the committed bytes", "file", cs.Name)
	}
	return nil
}

// written returns the format the current output file was written in,
// which differs from the one asked for only while the file is empty (an
// interrupted run may have left records past its committed size of 0).
func (p *Processor) written() cdc.Format {
	if f, err := cdc.ParseFormat(p.cp.Sink.Format); err == nil {
		return f
	}
	return p.opts.SinkFormat
}

// checkCommitted checks that the file's committed bytes are the ones this
// database wrote: the CRC of their tail, for JSON Lines that the committed
// size ends a line, and then the CRC of them all (recorded since V 2).
func (p *Processor) checkCommitted() error {
	s, cs := p.opts.Sink, &p.cp.Sink
	if cs.TailLen > cs.Size {
		return fmt.Errorf("%w: the checkpoint's output tail is longer (%d bytes) than the output (%d)", ErrCorrupt, cs.TailLen, cs.Size)
	}
	if cs.TailLen > 0 {
		var t tailWindow
		if err := t.load(s, cs.Size); err != nil {
			return err
		}
		var got sinkState
		t.stamp(&got)
		if got.TailCRC != cs.TailCRC {
			return fmt.Errorf("%w: in %s the %d bytes before offset %d have CRC-32C %08x, this database wrote %08x: the file was replaced or changed since; %s",
				ErrSinkChanged, cs.Name, cs.TailLen, cs.Size, got.TailCRC, cs.TailCRC, p.regenerate())
		}
	}
	if p.written() == cdc.JSONL && cs.Size > 0 {
		var b [1]byte
		if _, err := s.ReadAt(b[:], cs.Size-1); err != nil {
			return fmt.Errorf("read the output file: %w", err)
		}
		if b[0] != '\n' {
			return fmt.Errorf("%w: the committed size of %s, %d bytes, does not end a line (the byte before it is %q); %s",
				ErrSinkChanged, cs.Name, cs.Size, b[0], p.regenerate())
		}
	}
	if cs.V >= 2 {
		crc, err := fileCRC(s, cs.Size)
		if err != nil {
			return err
		}
		if crc != cs.FileCRC {
			return fmt.Errorf("%w: in %s the %d committed bytes have CRC-32C %08x, this database wrote %08x: the file was changed since; %s",
				ErrSinkChanged, cs.Name, cs.Size, crc, cs.FileCRC, p.regenerate())
		}
	}
	return nil
}

// fileCRC returns the CRC-32C of the first size bytes of r.
func fileCRC(r io.ReaderAt, size int64) (uint32, error) {
	buf := make([]byte, min(size, 1<<20))
	var crc uint32
	for off := int64(0); off < size; {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		crc = crc32.Update(crc, sinkCRCTable, buf[:n])
		off += int64(n)
		if err != nil && off < size {
			return 0, fmt.Errorf("read the output file's committed bytes: %w", err)
		}
	}
	return crc, nil
}

// adoptCommitted takes the records past the committed size that are,
// byte for byte, the committed records the file lacks (a catch-up that
// was interrupted, or a file regenerated with replay): the file's state
// moves past them instead of their being cut and written again.
func (p *Processor) adoptCommitted(size int64) error {
	cs := &p.cp.Sink
	if cs.Next >= p.cp.NextOutput || p.written() != p.opts.SinkFormat {
		return nil
	}
	sc := newRecordScanner(p.opts.Sink, cs.Size, size, p.opts.SinkFormat)
	chain := cs.chain()
	var got cdc.Message
	var want []byte
	err := p.db.View(func(tx *bolt.Tx) error {
		return scanOutput(tx, cs.Next, func(seq uint64, m *cdc.Message) (bool, error) {
			if seq >= p.cp.NextOutput {
				return false, nil
			}
			b, err := sc.next(&got)
			if err != nil {
				return false, nil // the end, a torn or a foreign record: not adopted
			}
			if want, err = cdc.AppendMessage(want[:0], p.opts.SinkFormat, m); err != nil {
				return false, fmt.Errorf("output record %d: %w", seq, err)
			}
			if !bytes.Equal(b, want) {
				return false, nil
			}
			chain.advance(m)
			cs.Size += int64(len(b))
			cs.Next = seq + 1
			cs.FileCRC = crc32.Update(cs.FileCRC, sinkCRCTable, b)
			return true, nil
		})
	})
	cs.setChain(&chain)
	if err != nil {
		return fmt.Errorf("read the output log: %w", err)
	}
	return nil
}

// checkExcess decides whether the bytes past the committed size may be
// cut: they must be no more than the checkpoint's Limit allows, in the
// file this database wrote, and records that continue the committed
// stream, the last of which may be torn.
func (p *Processor) checkExcess(size int64, replaced bool, ino uint64) error {
	cs := &p.cp.Sink
	excess := size - cs.Size
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s has %d bytes past the %d committed, and %s; %s",
			ErrSinkExcess, cs.Name, excess, cs.Size, fmt.Sprintf(format, args...), p.regenerate())
	}
	switch {
	case replaced:
		return refuse("is no longer the file this database wrote (inode %d, was %d)", ino, cs.Inode)
	case cs.V >= 1 && cs.Limit == cs.Size:
		return refuse("the last run that wrote it closed cleanly, so none are its own")
	case cs.V >= 2:
		return p.checkLeftover(size, refuse)
	case cs.V == 1 && size > cs.Limit:
		return refuse("an interrupted run leaves at most %d", cs.Limit-cs.Size)
	}
	// Written before its batch committed (V 1), or before the checks (V 0):
	// the records of batches that never committed may follow.
	f := p.written()
	sc := newRecordScanner(p.opts.Sink, cs.Size, size, f)
	chain := cs.chain()
	var m cdc.Message
	for {
		at := sc.off
		b, err := sc.next(&m)
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, errTorn):
			if !tornRecord(b, f) {
				return refuse("its last %d bytes, at byte %d, do not begin a record", len(b), at)
			}
			return nil
		case err != nil:
			if zeros, zerr := allZeros(p.opts.Sink, at, size); zerr == nil && zeros {
				return nil // see tornRecord
			}
			return refuse("they are not %s records: %v", f, err)
		}
		if err := chain.push(&m); err != nil {
			return refuse("the record at byte %d does not continue the committed stream: %v", at, err)
		}
	}
}

// checkLeftover decides, for a file written since V 2, whether the bytes
// past the committed size may be cut. The file receives only committed
// records, and adoptCommitted has taken the whole ones among them, so an
// interrupted run can have left only the start of the output log's next
// record, torn by the crash, with zeros where written data never reached
// the disk: every byte must be the one this database would write there,
// or zero. Any other is another program's.
func (p *Processor) checkLeftover(size int64, refuse func(string, ...any) error) error {
	cs := &p.cp.Sink
	f, next, end := p.written(), cs.Next, p.cp.NextOutput
	chain := cs.chain()
	var want []byte // this database's bytes from off on
	got := make([]byte, 64<<10)
	for off := cs.Size; off < size; {
		n, err := p.opts.Sink.ReadAt(got[:min(int64(len(got)), size-off)], off)
		if n == 0 {
			return fmt.Errorf("read the output file past its committed size: %w", err)
		}
		for len(want) < n && next < end {
			if want, next, err = p.encodeOutput(want, next, end, f, &chain); err != nil {
				return err
			}
		}
		for i, b := range got[:n] {
			switch {
			case b == 0:
			case i >= len(want):
				return refuse("the bytes from offset %d on are past every record this database committed, so another program wrote them", off+int64(i))
			case b != want[i]:
				return refuse("the byte at offset %d differs from the committed record this database wrote there", off+int64(i))
			}
		}
		want = want[:copy(want, want[min(n, len(want)):])]
		off += int64(n)
	}
	return nil
}

// encodeOutput appends to buf, in format f, the output log's records from
// next on, up to end and about 1 MiB, moving chain past them, and returns
// buf and the first record it did not append.
func (p *Processor) encodeOutput(buf []byte, next, end uint64, f cdc.Format, chain *streamChain) ([]byte, uint64, error) {
	from := next
	err := p.db.View(func(tx *bolt.Tx) error {
		return scanOutput(tx, next, func(seq uint64, m *cdc.Message) (bool, error) {
			if seq != next || seq >= end {
				return false, nil
			}
			var err error
			if buf, err = cdc.AppendMessage(buf, f, m); err != nil {
				return false, fmt.Errorf("output record %d: %w", seq, err)
			}
			chain.advance(m)
			next++
			return len(buf) < 1<<20, nil
		})
	})
	if err == nil && next == from {
		err = fmt.Errorf("%w: the output log lacks record %d", ErrInconsistent, next)
	}
	return buf, next, err
}

// tornRecord reports whether b can be the start of a record that a crash
// cut short: a prefix of how every record begins (or longer), or zeros,
// which a file system may show where written data never reached the disk.
func tornRecord(b []byte, f cdc.Format) bool {
	if len(bytes.Trim(b, "\x00")) == 0 {
		return true
	}
	for _, start := range recordStarts(f) {
		n := min(len(b), len(start))
		if bytes.Equal(b[:n], start[:n]) {
			return true
		}
	}
	return false
}

// allZeros reports whether the file's bytes from from to to are all zero.
func allZeros(r io.ReaderAt, from, to int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for from < to {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), to-from)], from)
		if len(bytes.Trim(buf[:n], "\x00")) > 0 {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		from += int64(n)
	}
	return true, nil
}

// recordStarts returns how each kind of output record begins in format
// f (an update, a bounded and an unbounded progress statement): the bytes
// before the first field that varies.
func recordStarts(f cdc.Format) [][]byte {
	common := func(a, b cdc.Message) []byte {
		// Small integer data: every format carries it exactly.
		x, _ := cdc.AppendMessage(nil, f, &a)
		y, _ := cdc.AppendMessage(nil, f, &b)
		n := 0
		for n < len(x) && n < len(y) && x[n] == y[n] {
			n++
		}
		return x[:n]
	}
	return [][]byte{
		common(cdc.NewUpdate([]byte("0"), 0, 1), cdc.NewUpdate([]byte("1"), 1, 2)),
		common(cdc.NewProgress(0, 1), cdc.NewProgress(1, 2)),
		common(unboundedProgress(0), unboundedProgress(1)),
	}
}

// unboundedProgress returns the progress statement that ends a stream at
// lower (in msgpack its map has one field fewer than a bounded one's).
func unboundedProgress(lower uint64) cdc.Message {
	m := cdc.NewProgress(lower, 0)
	m.Progress.Unbounded = true
	return m
}

// chain returns the stream chain as of the file's end.
func (cs *sinkState) chain() streamChain {
	return streamChain{at: cs.Chained, frontier: cs.Frontier, done: cs.Done}
}

// setChain records the chain as of the file's end.
func (cs *sinkState) setChain(c *streamChain) {
	cs.Chained, cs.Frontier, cs.Done = c.at, c.frontier, c.done
}

// catchUpSink writes the committed records the file lacks, then fsyncs
// them. Nothing is committed on the way: an interrupted catch-up leaves
// committed records past the committed size, which the next Open takes as
// they are (adoptCommitted).
func (p *Processor) catchUpSink() error {
	cs := &p.cp.Sink
	end := p.cp.NextOutput
	if cs.Next >= end {
		return nil
	}
	at := markOf(cs, &p.sinkTail)
	first := at.next
	var buf []byte
	for at.next < end {
		// Read in a transaction of its own, closed before any write:
		// bbolt's writer may have to wait for readers to remap.
		chain := at.chain
		var next uint64
		var err error
		if buf, next, err = p.encodeOutput(buf[:0], at.next, end, p.opts.SinkFormat, &chain); err != nil {
			return fmt.Errorf("catch up output file: %w", err)
		}
		if _, err := p.opts.Sink.Write(buf); err != nil {
			return fmt.Errorf("catch up output file: write: %w", err)
		}
		at.advance(buf, next, chain)
	}
	if err := p.opts.Sink.Sync(); err != nil {
		return fmt.Errorf("catch up output file: fsync: %w", err)
	}
	at.stamp(cs)
	p.sinkTail = at.tail
	p.log.Info("output file caught up with the committed output", "file", cs.Name, "records", cs.Next-first)
	return nil
}
