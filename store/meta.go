package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's file layout, as far as Open reads it before handing the file
// to bbolt (go.etcd.io/bbolt/internal/common, file format version 2):
// every page starts with a 16-byte header (id 8, flags 2, count 2,
// overflow 4); pages 0 and 1 are meta pages whose body is magic 4,
// version 4, page size 4, flags 4, root bucket (root page 8, sequence 8),
// freelist page 8, high-water mark pgid 8, txid 8, and an FNV-64a
// checksum 8 of the 56 bytes before it. Integers are in the machine's
// byte order.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaChecksummed  = 56
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10
	leafPageFlag     = 0x02
)

// boltMeta is one decoded meta page.
type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64 // the high-water mark: pages [0, pgid) are in use
	txid     uint64
}

// parseMeta decodes the meta page that starts at page[0] and reports
// whether it validates as bbolt's does (magic, version, checksum).
func parseMeta(page []byte) (boltMeta, bool) {
	if len(page) < pageHeaderSize+metaChecksummed+8 {
		return boltMeta{}, false
	}
	b := page[pageHeaderSize:]
	e := binary.NativeEndian
	if e.Uint32(b[0:]) != boltMagic || e.Uint32(b[4:]) != boltVersion {
		return boltMeta{}, false
	}
	h := fnv.New64a()
	h.Write(b[:metaChecksummed])
	if h.Sum64() != e.Uint64(b[metaChecksummed:]) {
		return boltMeta{}, false
	}
	return boltMeta{pageSize: e.Uint32(b[8:]), root: e.Uint64(b[16:]), freelist: e.Uint64(b[32:]),
		pgid: e.Uint64(b[40:]), txid: e.Uint64(b[48:])}, true
}

// initImage returns the four pages that bbolt writes, in one write and
// then fdatasync, when it creates a file: meta pages with txids 0 and 1,
// an empty freelist at page 2 and an empty root leaf at page 3.
func initImage(pageSize int) []byte {
	buf := make([]byte, 4*pageSize)
	e := binary.NativeEndian
	for i := range 2 {
		p := buf[i*pageSize:]
		e.PutUint64(p[0:], uint64(i))
		e.PutUint16(p[8:], metaPageFlag)
		m := p[pageHeaderSize:]
		e.PutUint32(m[0:], boltMagic)
		e.PutUint32(m[4:], boltVersion)
		e.PutUint32(m[8:], uint32(pageSize))
		e.PutUint64(m[16:], 3) // root bucket at page 3, sequence 0
		e.PutUint64(m[32:], 2) // freelist
		e.PutUint64(m[40:], 4) // pgid
		e.PutUint64(m[48:], uint64(i))
		h := fnv.New64a()
		h.Write(m[:metaChecksummed])
		e.PutUint64(m[metaChecksummed:], h.Sum64())
	}
	e.PutUint64(buf[2*pageSize:], 2)
	e.PutUint16(buf[2*pageSize+8:], freelistPageFlag)
	e.PutUint64(buf[3*pageSize:], 3)
	e.PutUint16(buf[3*pageSize+8:], leafPageFlag)
	return buf
}

// fileState is what Open learns from a file's first pages before bbolt
// sees it.
type fileState struct {
	size int64
	// blank, when set, says why the file provably holds no committed
	// state: Open treats it as absent.
	blank string
	// short, when set, is the corruption of a file cut below its
	// high-water mark.
	short error
	// damagedMeta, when set, says which meta page fails bbolt's
	// validation while the other passes: bbolt then reads the other
	// one, which may describe an earlier state, even the empty one.
	damagedMeta string
	// noMeta is set when neither meta page validates.
	noMeta bool
}

// examine reads f's meta pages. A file holds no committed state when it
// is empty; when both meta pages validate and neither has a txid above 1
// (bbolt's first write completed, and no transaction ever committed: the
// first commit is txid 2 and writes meta page 0); or when it is no longer
// than bbolt's first write and every byte is either the byte bbolt writes
// there or zero (that write was cut by a power loss). A file whose newest
// valid meta page has committed a transaction must be at least as long as
// that meta page's high-water mark. Anything else is left to bbolt, which
// refuses what it cannot read.
func examine(f *os.File, osPageSize int) (fileState, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileState{}, err
	}
	st := fileState{size: fi.Size()}
	if st.size == 0 {
		st.blank = "the file is empty"
		return st, nil
	}
	head := make([]byte, min(st.size, 4*maxPageSize))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return st, fmt.Errorf("read the meta pages: %w", err)
	}
	m0, ok0 := parseMeta(head)
	m1, ok1 := findSecondMeta(f, head, m0, ok0, st.size)
	best, ok := m0, ok0
	if ok1 && (!ok0 || m1.txid > m0.txid) {
		best, ok = m1, true
	}
	st.noMeta = !ok0 && !ok1
	switch {
	case ok0 && !ok1:
		st.damagedMeta = "meta page 1"
	case ok1 && !ok0:
		st.damagedMeta = "meta page 0"
	}
	switch {
	case ok && best.txid >= 2:
		if hwm := int64(best.pgid) * int64(best.pageSize); st.size < hwm {
			st.short = fmt.Errorf("%w: the file is %d bytes, shorter than the %d bytes its last commit uses (bbolt's high-water mark, page %d of %d bytes): it was cut short",
				ErrCorrupt, st.size, hwm, best.pgid, best.pageSize)
		}
	case ok0 && ok1:
		st.blank = "bbolt's first write is complete but no transaction was ever committed"
	default:
		sizes := []int{osPageSize, 4096, 16384, 65536}
		if ok {
			sizes = append(sizes, int(best.pageSize))
		}
		for _, ps := range sizes {
			if tornInit(head, st.size, ps) {
				st.blank = "it holds only part of bbolt's first write (cut by a power loss)"
				break
			}
		}
	}
	return st, nil
}

// maxPageSize is the largest page size Open looks for in a file's first
// pages; bbolt uses the system's page size (4 KiB to 64 KiB).
const maxPageSize = 64 << 10

// findSecondMeta decodes meta page 1. Its offset is the page size, which
// meta page 0 gives when it validates; otherwise each page size that
// bbolt tries is tried in turn (1 KiB to 16 MiB).
func findSecondMeta(f *os.File, head []byte, m0 boltMeta, ok0 bool, size int64) (boltMeta, bool) {
	at := func(off int64) (boltMeta, bool) {
		if off+pageHeaderSize+metaChecksummed+8 > size {
			return boltMeta{}, false
		}
		if off+4096 <= int64(len(head)) {
			return parseMeta(head[off:])
		}
		var page [4096]byte
		n, _ := f.ReadAt(page[:], off)
		return parseMeta(page[:n])
	}
	if ok0 {
		return at(int64(m0.pageSize))
	}
	for i := range 15 {
		if m, ok := at(1024 << i); ok {
			return m, true
		}
	}
	return boltMeta{}, false
}

// tornInit reports whether the file, size bytes of which head holds the
// beginning, is a prefix of bbolt's first write with some parts still
// zero.
func tornInit(head []byte, size int64, pageSize int) bool {
	if pageSize <= 0 || size > int64(4*pageSize) || int64(len(head)) < size {
		return false
	}
	want := initImage(pageSize)
	for i, b := range head[:size] {
		if b != 0 && b != want[i] {
			return false
		}
	}
	return true
}

// CheckHeaders reads, from the file, the pages whose headers bbolt's
// Tx.Check asserts before it walks anything: the two meta pages and the
// free list of the meta page in use. Each must name itself by its page
// id and carry its type's flag, and a meta page must validate (magic,
// version, checksum). bbolt's Check runs on a goroutine of its own,
// where a failed assertion is a panic that no caller can recover and
// ends the process: a caller runs it only when CheckHeaders returns no
// error. A meta page that fails only its checksum does not stop bbolt's
// check, but it is damage all the same (bbolt reads the other one).
// Call it inside a read transaction, so that no commit rewrites a meta
// page meanwhile.
func (db *DB) CheckHeaders() (errs []error, fatal bool) {
	ps := db.Info().PageSize
	e := binary.NativeEndian
	page := make([]byte, ps)
	read := func(id uint64) bool {
		n, err := db.file.ReadAt(page, int64(id)*int64(ps))
		if n < pageHeaderSize {
			errs = append(errs, fmt.Errorf("%w: page %d: cannot read its header: %v", ErrCorrupt, id, err))
			return false
		}
		return true
	}
	var metas [2]boltMeta
	var valid [2]bool
	for id := range uint64(2) {
		if !read(id) {
			fatal = true
			continue
		}
		got, flags := e.Uint64(page), e.Uint16(page[8:])
		switch {
		case got != id:
			errs, fatal = append(errs, fmt.Errorf("%w: meta page %d is damaged: it identifies itself as page %d", ErrCorrupt, id, got)), true
		case flags != metaPageFlag:
			errs, fatal = append(errs, fmt.Errorf("%w: meta page %d is damaged: its flags are %#x", ErrCorrupt, id, flags)), true
		default:
			metas[id], valid[id] = parseMeta(page)
			if !valid[id] {
				errs = append(errs, fmt.Errorf("%w: meta page %d is damaged: it fails bbolt's validation (magic, version or checksum); bbolt reads the other", ErrCorrupt, id))
			}
		}
	}
	// The meta page bbolt uses: the one of the higher txid that validates.
	a, b := 0, 1
	if metas[1].txid > metas[0].txid {
		a, b = 1, 0
	}
	use := a
	if !valid[a] {
		use = b
	}
	if !valid[use] {
		return errs, true
	}
	const noFreelist = ^uint64(0)
	if fl := metas[use].freelist; fl != noFreelist && read(fl) {
		if got, flags := e.Uint64(page), e.Uint16(page[8:]); got != fl || flags != freelistPageFlag {
			errs, fatal = append(errs, fmt.Errorf("%w: the free list's page %d is damaged: it identifies itself as page %d with flags %#x", ErrCorrupt, fl, got, flags)), true
		}
	}
	return errs, fatal
}
