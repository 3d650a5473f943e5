//go:build linux

package recovery

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/internal/proctest"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

func TestLoadDropsTheMappedPagesOnceItHasReadEnoughChunks(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "x.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const values, size = 1024, 32 << 10 // 32 MiB, as many chunks would be
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketOutput)
		for i := range uint64(values) {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, i), bytes.Repeat([]byte{byte(i)}, size)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &walStore{db: db}
	readAll := func(tx *bolt.Tx) {
		var sum byte
		_ = tx.Bucket(store.BucketOutput).ForEach(func(_, v []byte) error {
			for i := 0; i < len(v); i += 4096 { // every page
				sum += v[i]
			}
			return nil
		})
		_ = sum
	}
	err = db.View(func(tx *bolt.Tx) error {
		readAll(tx)
		before := proctest.RssFileKiB(t)
		s.releaseLoaded(releaseLoadedEvery - 1)
		if kept := proctest.RssFileKiB(t); before-kept > 8<<10 {
			t.Errorf("RssFile %d KiB, then %d after fewer than %d chunks: released too soon", before, kept, releaseLoadedEvery)
		}
		s.releaseLoaded(1)
		if after := proctest.RssFileKiB(t); before-after < 16<<10 {
			t.Errorf("RssFile %d KiB, then %d after %d chunks: want at least 16 MiB less", before, after, releaseLoadedEvery)
		}
		if s.loaded != 0 {
			t.Errorf("%d chunks counted after the release, want 0", s.loaded)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
