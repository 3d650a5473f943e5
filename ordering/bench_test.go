package ordering

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchKeys returns n keys for each of shards shards, each shard sorted:
// DynamoDB-like times (about 100 records per second, so many equal times
// across shards) and 21-digit sequence numbers.
func benchKeys(shards, n int) [][]Key {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]Key, shards)
	for s := range out {
		sec, seq := int64(baseEpoch), uint64(0)
		keys := make([]Key, n)
		for i := range keys {
			if rng.IntN(100) == 0 {
				sec++
			}
			seq += 1 + uint64(rng.IntN(1000))
			keys[i] = Key{
				CreatedAt: Timestamp{sec: sec},
				Seq:       SeqNum{digits: fmt.Sprintf("%d%020d", 1+s, seq)},
			}
		}
		out[s] = keys
	}
	return out
}

var benchShardCounts = []int{2, 64}

// BenchmarkMerge measures the merge itself: keys already parsed, records
// in memory. One op is one record.
func BenchmarkMerge(b *testing.B) {
	for _, k := range benchShardCounts {
		b.Run(fmt.Sprintf("shards=%d", k), func(b *testing.B) {
			keys := benchKeys(k, b.N/k+1)
			sources := make([]Source[rec], k)
			for i := range sources {
				sources[i] = &sliceSource{shard: i, keys: keys[i]}
			}
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			err := Merge(sources, func(int, Item[rec]) error { n++; return nil }, nil)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// benchShardFiles returns k sorted JSON Lines shards of n records in all,
// records of about 200 bytes like scripts/bench-merge's.
func benchShardFiles(k, n int) (files [][]byte, size int) {
	keys := benchKeys(k, n/k+1)
	for i, shard := range keys {
		var buf bytes.Buffer
		for j, key := range shard {
			fmt.Fprintf(&buf, `{"meta":{"created_at":%s,"sequence_number":"%s"},"eventID":"%d-%d","eventName":"MODIFY","dynamodb":{"Keys":{"id":{"S":"user-%d"}},"NewImage":{"id":{"S":"user-%d"},"n":{"N":"%d"}}}}`+"\n",
				key.CreatedAt, key.Seq, i, j, j%977, j%977, j%10007)
		}
		files = append(files, buf.Bytes())
		size += buf.Len()
	}
	return files, size
}

// BenchmarkMergeJSONL measures cdclog merge's library function, MergeJSONL,
// from shards in memory to io.Discard: its readers' parsing, the merge and
// the output's copying. "reference" is the path before it (one goroutine,
// JSONLReader with encoding/json's validation, Merge, a bufio.Writer), kept
// as the tests' model. One op is one record.
func BenchmarkMergeJSONL(b *testing.B) {
	for _, k := range []int{2, 16} {
		for _, impl := range []string{"fast", "reference"} {
			b.Run(fmt.Sprintf("shards=%d/%s", k, impl), func(b *testing.B) {
				files, size := benchShardFiles(k, max(b.N, 1000))
				shards := make([]Shard, k)
				for i := range shards {
					shards[i] = Shard{Name: fmt.Sprint(i), R: bytes.NewReader(files[i])}
				}
				merge := MergeJSONL
				if impl == "reference" {
					merge = mergeJSONLReference
				}
				b.ReportAllocs()
				b.ResetTimer()
				st, err := merge(context.Background(), shards, io.Discard, MergeOptions{})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.Written)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(size)/float64(st.Written), "bytes/record")
			})
		}
	}
}

// BenchmarkBufferPushPop measures a Buffer holding about 1000 records: one
// push and one pop per op.
func BenchmarkBufferPushPop(b *testing.B) {
	keys := benchKeys(1, 1<<16)[0]
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var buf Buffer[int]
	for i := range 1000 {
		buf.Push(keys[i], i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Push(keys[i&(1<<16-1)], i)
		buf.Pop()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// benchRecord is a DynamoDB-like record of about 200 bytes, key first.
const benchRecord = `{"meta":{"created_at":1700000123,"sequence_number":"100000000000001234567"},"eventID":"0012d687","eventName":"MODIFY","dynamodb":{"Keys":{"id":{"S":"user-123"}},"NewImage":{"id":{"S":"user-123"},"n":{"N":"4567"}}}}`

// BenchmarkRecordKey compares the fast key scanner with the slow path it
// replaced on the hot path (json.Valid, then the scanner over valid JSON):
// the decision to hand-write a validator, with its numbers. One op is one
// record.
func BenchmarkRecordKey(b *testing.B) {
	rec := []byte(benchRecord)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			if _, ok := fastRecordKey(rec); !ok {
				b.Fatal("fast path declined")
			}
		}
	})
	b.Run("shape", func(b *testing.B) {
		var ks keyScanner
		var k mergeKey
		other := []byte(strings.Replace(benchRecord, "1234567", "7654321", 1))
		ks.key(other, &k) // learns the shape
		b.ReportAllocs()
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			if !ks.key(rec, &k) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			if _, err := recordKeySlow(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			json.Valid(rec)
		}
	})
}
