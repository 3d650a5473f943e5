package wal

import (
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Stats describes the log's contents. The zero Stats is an empty log's.
//
// A processor keeps its log's Stats up to date as the log changes, rather
// than walk the index for every status (0.14 s of CPU on an 18 GB log of
// 220,000 chunks): Batch.Written says what a Write added, and
// DeleteBelowUpdating what a deletion left. Either way the figures are
// those ReadStats would read.
type Stats struct {
	Chunks  int
	Entries uint64
	// Bytes is the size of the log's keys and values (chunks and index).
	Bytes int64
	// MinTime and MaxTime bound the times the entries speak about
	// (MinTime counts their spans, see ChunkInfo.First); zero when empty.
	MinTime, MaxTime uint64
}

// add counts one chunk: its index record x, stored under a key of klen
// bytes in a value of vlen bytes.
func (s *Stats) add(klen, vlen int, x index) {
	if s.Chunks == 0 || x.first < s.MinTime {
		s.MinTime = x.first
	}
	s.MaxTime = max(s.MaxTime, x.last)
	s.Entries += uint64(x.entries)
	s.Bytes += int64(x.size) + 8 + int64(klen+vlen)
	s.Chunks++
}

// Plus returns the statistics of a log holding the chunks s counts and
// those o counts: what a log counted by s holds once a batch that wrote
// o (Batch.Written) has committed.
func (s Stats) Plus(o Stats) Stats {
	switch {
	case o.Chunks == 0:
		return s
	case s.Chunks == 0:
		return o
	}
	return Stats{
		Chunks: s.Chunks + o.Chunks, Entries: s.Entries + o.Entries, Bytes: s.Bytes + o.Bytes,
		MinTime: min(s.MinTime, o.MinTime), MaxTime: max(s.MaxTime, o.MaxTime),
	}
}

// ReadStats computes the log's statistics from its index alone, each
// record verified: it reads 36 bytes per chunk, never the chunks, so it
// is cheap on a big log (and does not pull the whole file into memory).
func (l Log) ReadStats(tx *bolt.Tx) (Stats, error) { return l.ReadStatsReleasing(tx, nil) }

// statsReleaseEvery is how many index records ReadStatsReleasing reads
// between two calls of its release function: about 140 leaf pages, a few
// MiB of mapped memory with the kernel's fault-around.
const statsReleaseEvery = 4096

// ReadStatsReleasing is ReadStats calling release, when it is not nil,
// after every statsReleaseEvery index records and at the end, so that the
// caller can drop the pages read so far from the process's resident set
// (store.DB.ReleaseMapped). Without it, the walk over a big log's index
// leaves most of the index resident: on an 18 GB database of 220,000
// chunks, `inspect status` peaked at 144 MB, and ingest's final status,
// at the end of a 2M-message run, took its peak from 185 MB to 302 MB.
func (l Log) ReadStatsReleasing(tx *bolt.Tx, release func()) (Stats, error) {
	wal, _, err := buckets(tx)
	if err != nil {
		return Stats{}, err
	}
	return l.walkStats(wal, release)
}

// walkStats reads the statistics of every index record in wal (see
// ReadStatsReleasing for release).
func (l Log) walkStats(wal *bolt.Bucket, release func()) (Stats, error) {
	if release != nil {
		defer release()
	}
	var s Stats
	c := wal.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if release != nil && s.Chunks%statsReleaseEvery == statsReleaseEvery-1 {
			release()
		}
		x, err := l.readIndex(k, v)
		if err != nil {
			return s, err
		}
		s.add(len(k), len(v), x)
	}
	return s, nil
}

// DeleteBelow removes every chunk whose entries are all below t and
// returns how many chunks it removed. It verifies each index record it
// goes by before deleting: a damaged key could otherwise make it delete a
// chunk that holds later times.
func (l Log) DeleteBelow(tx *bolt.Tx, t uint64) (int, error) {
	return l.DeleteBelowUpdating(tx, t, nil, nil)
}

// DeleteBelowUpdating is DeleteBelow keeping s, when it is not nil, the
// statistics of the log before it (as ReadStats would read them), up to
// date: on success *s is what ReadStats reads after the deletion. The
// counts and bytes come from the deleted chunks' records and the largest
// time stays (every chunk kept has a larger last time than any deleted);
// the smallest time is found again only when a deleted chunk held it,
// by a walk over the index records kept (see ReadStatsReleasing for
// release), which then gives every figure. So a gc of the log's oldest
// chunks, which usually hold its smallest time, costs a walk over what
// it keeps: the figures of a status, read far more often, cost nothing.
// On an error *s is unchanged (the transaction is then to be rolled
// back).
func (l Log) DeleteBelowUpdating(tx *bolt.Tx, t uint64, s *Stats, release func()) (int, error) {
	wal, seq, err := buckets(tx)
	if err != nil {
		return 0, err
	}
	var keys [][]byte
	var gone Stats
	c := wal.Cursor()
	for k, v := c.First(); k != nil && binary.BigEndian.Uint64(k) < t; k, v = c.Next() {
		x, err := l.readIndex(k, v)
		if err != nil {
			return 0, err
		}
		gone.add(len(k), len(v), x)
		keys = append(keys, slices.Clone(k))
	}
	for _, k := range keys {
		if err := seq.Delete(k[8:]); err != nil {
			return 0, fmt.Errorf("wal: delete chunk: %w", err)
		}
		if err := wal.Delete(k); err != nil {
			return 0, fmt.Errorf("wal: delete chunk index: %w", err)
		}
	}
	if s == nil || gone.Chunks == 0 {
		return len(keys), nil
	}
	after := Stats{Chunks: s.Chunks - gone.Chunks, Entries: s.Entries - gone.Entries, Bytes: s.Bytes - gone.Bytes,
		MinTime: s.MinTime, MaxTime: s.MaxTime}
	switch {
	case after.Chunks <= 0:
		after = Stats{}
	case gone.MinTime <= s.MinTime:
		if after, err = l.walkStats(wal, release); err != nil {
			return 0, err
		}
	}
	*s = after
	return len(keys), nil
}
