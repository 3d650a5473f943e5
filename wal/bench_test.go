package wal

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkBatchWrite measures a group commit's WAL work: encoding 32K
// entries of message-sized bodies into chunks and writing them in one
// transaction (without fsync: the encoding and bbolt's own work).
func BenchmarkBatchWrite(b *testing.B) {
	db := openTestDB(b, b.TempDir())
	defer db.Close()
	body := []byte("\x94\x01\xa3\"a\"\xce\x00\x01\xe2\x40\x01") // a binary update's size
	const perBatch = 32 << 10
	var batch Batch
	arrival, chunk := uint64(0), uint64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for range perBatch {
			batch.Add(Entry{Time: arrival / 3, Arrival: arrival, Line: arrival + 1, Offset: arrival * 40, Body: body})
			arrival++
		}
		err := db.Update(func(tx *bolt.Tx) error {
			n, err := batch.Write(tx, uint64(i), chunk)
			chunk += n
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		batch.Reset()
	}
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkBatchAdd measures encoding alone: 32K entries shaped like an
// ingest's (times a little apart, lines and offsets of a big input file)
// added to a batch, without writing it.
func BenchmarkBatchAdd(b *testing.B) {
	body := []byte("\x94\x01\xc4\x03\"a\"\xce\x00\x01\xe2\x40\x01") // a binary update's size
	const perBatch = 32 << 10
	var batch Batch
	arrival := uint64(10_000_000)
	for b.Loop() {
		for range perBatch {
			batch.AddFunc(Entry{Time: arrival / 3, Arrival: arrival, Line: arrival + 1, Offset: arrival * 40},
				func(dst []byte) []byte { return append(dst, body...) })
			arrival++
		}
		batch.Reset()
	}
	b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "entries/s")
}
