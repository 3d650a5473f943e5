package recovery

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// walStore is the receiver's demangle.Store in the durable processor: the
// messages about times beyond the receiver's horizon are the WAL's
// entries there, already on disk, so holding one costs nothing but, until
// its batch commits, a copy in memory (a tail); loading a window reads the
// WAL chunks that may hold entries in it. See "The pending state on disk"
// in the package documentation.
//
// The apply goroutine calls Hold, Load and Shed (through the receiver)
// and begin; the commit goroutine calls committed. mu guards what both
// use.
type walStore struct {
	db  *store.DB
	log wal.Log
	// spansFrom is the first chunk whose index record starts at its
	// statements' lower bounds (layout.spansFrom).
	spansFrom uint64
	// source names a WAL entry's source index (the apply goroutine's
	// checkpoint's Sources).
	source func(uint64) string

	mu sync.Mutex
	// chunks are the committed chunks that may hold entries not
	// delivered yet, by the smallest From they may hold.
	chunks chunkHeap
	// registering is set while the receiver has a horizon: chunks that
	// commit with a last time at or beyond horizon join chunks.
	registering bool
	horizon     uint64
	// tails hold, oldest first, copies of the messages held during
	// batches that have not committed yet; batch is the number the batch
	// being applied will carry.
	tails []*batchTail
	batch uint64
	// cur is the tail of the batch being applied, once it holds something:
	// only the apply goroutine touches its messages (committed drops a tail
	// only once its batch has committed), so Hold appends to it without
	// the lock.
	cur *batchTail
	// spare keeps dropped tails for reuse: growing a fresh one each
	// batch was a sixth of a held-back stream's time.
	spare []*batchTail
	// loaded counts the chunks Load has read since it last dropped the
	// database's mapped pages (see releaseLoadedEvery).
	loaded int
}

// releaseLoadedEvery is how many chunks Load reads (at most 32 KiB each)
// before it drops the database's mapped pages from the resident set
// (store.DB.ReleaseMapped), inside the read transaction that read them.
// The commits release them every 16 commits, but while the frontier moves
// through held times every commit's loads read megabytes of chunks: on
// a 16.5M-message stream with its progress at the end, the mapped pages
// went from about 20 MB to 77 MB between two of the commits' releases.
const releaseLoadedEvery = 256

// batchTail is what was held during one batch, until it commits: the
// messages themselves, not copies, which their requests own until they
// are finished, after the batch commits (and committed drops the tail).
type batchTail struct {
	batch uint64
	held  []tailHeld
	left  int // not delivered yet
}

type tailHeld struct {
	demangle.Held
	delivered bool
}

// pendingChunk is a committed chunk that may hold undelivered entries.
type pendingChunk struct {
	wal.ChunkInfo
	// key is at most the smallest From among its undelivered entries.
	key uint64
	// clamp is where a rescan started: entries' From count from there
	// (what the receiver held about earlier times it did not drop).
	clamp uint64
}

type chunkHeap []pendingChunk

func (h chunkHeap) Len() int           { return len(h) }
func (h chunkHeap) Less(i, j int) bool { return h[i].key < h[j].key }
func (h chunkHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *chunkHeap) Push(x any)        { *h = append(*h, x.(pendingChunk)) }
func (h *chunkHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newWALStore(db *store.DB, l *layout, source func(uint64) string) *walStore {
	return &walStore{db: db, log: l.wal, spansFrom: l.spansFrom, source: source}
}

// rescan makes every committed chunk holding entries at or beyond from
// pending again, as not delivered: what the receiver held about those
// times is no longer in memory (Shed), or never was (Open). No batch may
// be in flight.
func (s *walStore) rescan(tx *bolt.Tx, from uint64) error {
	if len(s.tails) > 0 {
		return errors.New("the pending state was rescanned with batches in flight")
	}
	var chunks chunkHeap
	err := s.log.Chunks(tx, from, func(c wal.ChunkInfo) error {
		key := from
		if c.Seq >= s.spansFrom {
			key = max(c.First, from)
		}
		chunks = append(chunks, pendingChunk{ChunkInfo: c, key: key, clamp: from})
		return nil
	})
	if err != nil {
		return err
	}
	heap.Init(&chunks)
	s.chunks, s.registering, s.horizon = chunks, true, from
	return nil
}

// begin says that the batch being applied now will carry number batch.
func (s *walStore) begin(batch uint64) { s.batch = batch }

// Hold keeps h until its batch commits: its message is in the batch's WAL
// entries, which the prepare goroutine encodes from the request, and its
// data is the request's, valid until then (a departure from
// demangle.Store's rule that a store copies what it keeps: copying cost
// more than a third of a held-back stream's time).
func (s *walStore) Hold(h *demangle.Held) error {
	if t := s.cur; t != nil && t.batch == s.batch {
		t.held = append(t.held, tailHeld{Held: *h})
		t.left++
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.tails)
	if n == 0 || s.tails[n-1].batch != s.batch {
		var t *batchTail
		if k := len(s.spare); k > 0 {
			t, s.spare = s.spare[k-1], s.spare[:k-1]
		} else {
			t = &batchTail{}
		}
		t.batch, t.left = s.batch, 0
		s.tails = append(s.tails, t)
		n++
	}
	t := s.tails[n-1]
	t.held = append(t.held, tailHeld{Held: *h})
	t.left++
	s.cur = t
	return nil
}

// load delivers the tail's messages in the window, in the order held,
// and returns the smallest From among those left.
func (t *batchTail) load(lo, last uint64, fn func(*demangle.Held) error) (next uint64, more bool, err error) {
	if t.left == 0 {
		return 0, false, nil
	}
	for i := range t.held {
		h := &t.held[i]
		if h.delivered {
			continue
		}
		switch {
		case h.Msg.Time() < lo:
			h.delivered = true
			t.left--
		case h.From <= last:
			h.delivered = true
			t.left--
			if err := fn(&h.Held); err != nil {
				return 0, false, err
			}
		case !more || h.From < next:
			next, more = h.From, true
		}
	}
	return next, more, nil
}

// Shed rescans the WAL from `from`: the durable processor sheds only when
// every batch it applied has committed, so the WAL holds everything the
// receiver dropped, and spilled is not needed.
func (s *walStore) Shed(from uint64, _ iter.Seq[*demangle.Held]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db.View(func(tx *bolt.Tx) error { return s.rescan(tx, from) })
}

// committed is called once a batch has committed, its WAL entries written
// as b's chunks numbered from first on: its tail is dropped, and its
// chunks that may hold entries beyond the horizon join the pending chunks.
func (s *walStore) committed(batch uint64, b *wal.Batch, first uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.tails) > 0 && s.tails[0].batch <= batch {
		if t := s.tails[0]; len(s.spare) < workCount {
			clear(t.held) // the requests' data is theirs again
			t.held = t.held[:0]
			s.spare = append(s.spare, t)
		}
		s.tails[0] = nil
		s.tails = s.tails[1:]
	}
	if !s.registering {
		return
	}
	for _, c := range b.Chunks(first) {
		if c.Last >= s.horizon {
			heap.Push(&s.chunks, pendingChunk{ChunkInfo: c, key: c.First})
		}
	}
}

// abandon drops every tail: the processor has stopped, its batches will
// not commit, and their requests' messages go back to their callers.
func (s *walStore) abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tails)
	s.tails = nil // cur, the apply goroutine's, is no longer read by Load
}

// Load delivers the entries in the window [lo, last] (see
// demangle.Store): those of the committed chunks that may hold some,
// read in sequence order (which is arrival order), then the tails'.
func (s *walStore) Load(lo, last uint64, fn func(*demangle.Held) error) (uint64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var picked []pendingChunk
	for s.chunks.Len() > 0 && s.chunks[0].key <= last {
		picked = append(picked, heap.Pop(&s.chunks).(pendingChunk))
	}
	if len(picked) > 0 {
		slices.SortFunc(picked, func(a, b pendingChunk) int {
			return cmp.Compare(a.Seq, b.Seq)
		})
		err := s.db.View(func(tx *bolt.Tx) error {
			for i := range picked {
				if err := s.loadChunk(tx, &picked[i], lo, last, fn); err != nil {
					return err
				}
			}
			s.releaseLoaded(len(picked))
			return nil
		})
		if err != nil {
			return 0, false, err
		}
	}
	next, more := uint64(0), false
	if s.chunks.Len() > 0 {
		next, more = s.chunks[0].key, true
	}
	for _, t := range s.tails {
		n, m, err := t.load(lo, last, fn)
		if err != nil {
			return 0, false, err
		}
		if m && (!more || n < next) {
			next, more = n, true
		}
	}
	if last == math.MaxUint64 {
		s.registering = false // everything is in memory: no horizon
	} else {
		s.horizon = last + 1
	}
	return next, more, nil
}

// releaseLoaded counts n chunks read and drops the mapped pages once
// releaseLoadedEvery have been, from inside the transaction that read
// them (where bbolt cannot remap). A failure costs only memory.
func (s *walStore) releaseLoaded(n int) {
	s.loaded += n
	if s.loaded < releaseLoadedEvery {
		return
	}
	s.loaded = 0
	_ = s.db.ReleaseMapped()
}

// loadChunk delivers the entries of one chunk in the window and puts the
// chunk back when some of its entries are beyond it.
func (s *walStore) loadChunk(tx *bolt.Tx, c *pendingChunk, lo, last uint64, fn func(*demangle.Held) error) error {
	var h demangle.Held
	key, left := uint64(0), false
	err := s.log.ReadChunk(tx, c.ChunkInfo, func(e *wal.Entry) error {
		if e.Time < lo {
			return nil // delivered, or below what the receiver dropped
		}
		parsed := false
		from := e.Time
		if cdc.BinaryKind(e.Body) == cdc.KindProgress {
			if _, err := cdc.ParseBinary(e.Body, &h.Msg); err != nil {
				return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
			}
			parsed, from = true, h.Msg.Progress.Lower
		}
		from = max(from, c.clamp)
		switch {
		case from < lo:
			return nil // delivered by an earlier window
		case from > last:
			if !left || from < key {
				key, left = from, true
			}
			return nil
		}
		if !parsed {
			if _, err := cdc.ParseBinary(e.Body, &h.Msg); err != nil {
				return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
			}
		}
		h.At = cdc.Pos{Source: s.source(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}
		h.Seq, h.From = e.Arrival+1, from
		return fn(&h)
	})
	if err != nil {
		return err
	}
	if left {
		c.key = key
		heap.Push(&s.chunks, *c)
	}
	return nil
}

// chunkCount returns the number of chunks that may hold entries beyond
// the horizon.
func (s *walStore) chunkCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chunks.Len()
}
