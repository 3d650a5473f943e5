package checksum

import "testing"

// BenchmarkOf measures the checksum of a full WAL or output chunk (32 KiB)
// and of a checkpoint-sized record.
func BenchmarkOf(b *testing.B) {
	for _, size := range []int{512, 32 << 10} {
		v, key := make([]byte, size), make([]byte, 8)
		b.Run(map[int]string{512: "512B", 32 << 10: "32KiB"}[size], func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				Of(key, v)
			}
		})
	}
}
