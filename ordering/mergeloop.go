package ordering

import (
	"context"
	"errors"
	"io"
	"sync"
)

// How MergeJSONL runs: one goroutine per shard reads chunks of lines,
// finds each record's key (fastRecordKey, falling back to the exact slow
// path) and checks the shard's order, running up to chunksPerShard chunks
// ahead; the calling goroutine merges the shards' heads, applies the
// policy in input order and copies the records into big buffers; one more
// goroutine writes those. Everything a run allocates is allocated at its
// start (the chunks, their entries, the output buffers): no allocation per
// record.
//
// The order is exactly Merge's: the heap holds one head per open shard,
// ordered by (key, clock), and a shard's next record becomes its head (and
// takes the next clock) right after its previous head was written, as
// Merge refills a source. Rejected lines and out-of-order reports are met
// at the same points as in Merge, so logs and quarantine are the same too.
// A shard whose chunks are used up makes the merge wait for its reader:
// no record is written until every open shard has one waiting, as the
// package promises.

// jsonlMerge is one run of MergeJSONL.
type jsonlMerge struct {
	report
	inputs    []Shard
	chunkSize int // 0: chunkSizeFor(len(inputs)); tests set it small
	shards    []*cursor
	heads     *loserTree // the shards' heads, by (key, clock)
	clock     uint64
	// nextReport is the count of records written at which merge calls
	// written, for progress and the context.
	nextReport int64
	stop       chan struct{} // closed when the merge ends: readers stop
	wg         sync.WaitGroup
	out        *output
}

// cursor is the merge's place in one shard.
type cursor struct {
	idx  int
	in   <-chan *chunk
	free chan<- *chunk
	c    *chunk // the chunk being merged
	next int    // its next entry
	// The shard's head, the record competing in the loser tree, with its
	// key and arrival clock copied here: the tree's comparisons read only
	// the cursors, not entries spread over the chunks.
	head  bool
	key   mergeKey
	clock uint64
	rec   []byte
}

func newMerge(shards []Shard, opts MergeOptions) *jsonlMerge {
	return &jsonlMerge{report: newReport(shards, opts), inputs: shards, stop: make(chan struct{}), nextReport: ProgressEvery}
}

// run starts the readers and the writer, merges, and stops them.
func (m *jsonlMerge) run(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.start()
	m.out = newOutput(w)
	err := m.merge(ctx)
	close(m.stop)
	if cerr := m.out.close(); err == nil {
		err = cerr
	}
	if err == nil {
		m.wg.Wait() // every reader has sent its last chunk
	}
	// On an error, a reader may still be inside its Read; it stops when
	// that returns, touching nothing but its own chunks.
	return err
}

// start makes a cursor and a reader goroutine for each shard.
func (m *jsonlMerge) start() {
	size := m.chunkSize
	if size == 0 {
		size = chunkSizeFor(len(m.inputs))
	}
	for i, s := range m.inputs {
		in := make(chan *chunk, chunksPerShard)
		free := make(chan *chunk, chunksPerShard)
		for range chunksPerShard {
			free <- &chunk{buf: make([]byte, 0, size)}
		}
		m.shards = append(m.shards, &cursor{idx: i, in: in, free: free})
		r := newShardReader(s, size)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			r.run(free, in, m.stop)
		}()
	}
}

// merge writes every record in order, until the shards end or an error.
func (m *jsonlMerge) merge(ctx context.Context) error {
	for _, s := range m.shards {
		if err := m.advance(ctx, s); err != nil {
			return err
		}
	}
	m.heads = newLoserTree(m.shards)
	out := m.out
	for {
		s := m.heads.winner()
		if s == nil {
			return nil
		}
		// The common case of each step is written out here; the calls
		// (appendLine, written, advance) take the others.
		if rec := s.rec; len(out.buf)+len(rec) < cap(out.buf) {
			out.buf = append(out.buf, rec...)
			out.buf = append(out.buf, '\n')
		} else if err := out.appendLine(rec); err != nil {
			return err
		}
		if m.stats.Written+1 < m.nextReport {
			m.stats.Written++
		} else {
			m.nextReport += ProgressEvery
			if err := m.written(ctx); err != nil {
				return err
			}
		}
		if e := s.peek(); e != nil && e.bad == nil && !e.disord {
			s.next++
			m.clock++
			s.clock, s.key, s.rec = m.clock, e.key, e.rec
		} else if err := m.advance(ctx, s); err != nil {
			return err
		}
		m.heads.replay()
	}
}

// peek returns the shard's next entry in its current chunk, or nil.
func (s *cursor) peek() *entry {
	if s.c == nil || s.next >= len(s.c.ents) {
		return nil
	}
	return &s.c.ents[s.next]
}

// advance makes the shard's next record its head, applying the policy to
// the bad lines before it; at the shard's end it has no head.
func (m *jsonlMerge) advance(ctx context.Context, s *cursor) error {
	s.head = false
	for {
		if s.c != nil && s.next < len(s.c.ents) {
			e := &s.c.ents[s.next]
			s.next++
			if e.bad != nil {
				if err := m.reject(e.bad); err != nil {
					return err
				}
				continue
			}
			m.clock++
			s.head, s.clock, s.key, s.rec = true, m.clock, e.key, e.rec
			if e.disord {
				m.disorder(s.idx, e.line, e.key.key())
			}
			return nil
		}
		if s.c != nil {
			if end := s.c.end; end != nil {
				if errors.Is(end, io.EOF) {
					return nil
				}
				return end
			}
			s.free <- s.c
		}
		select {
		case s.c = <-s.in:
			s.next = 0
		case <-ctx.Done():
			s.c = nil
			return ctx.Err()
		}
	}
}
