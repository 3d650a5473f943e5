package cdc

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendUintAndIntMatchStrconv(t *testing.T) {
	values := []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 123456, 9999999999999999,
		1e16, 1e16 + 1, math.MaxUint64 - 1, math.MaxUint64}
	for p := uint64(1); p < 1e19; p *= 10 {
		values = append(values, p-1, p, p+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range values {
		if got, want := string(appendUint([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendUint(%d) = %q, want %q", v, got, want)
		}
		for _, i := range []int64{int64(v), -int64(v)} {
			if got, want := string(appendInt(nil, i)), strconv.FormatInt(i, 10); got != want {
				t.Fatalf("appendInt(%d) = %q, want %q", i, got, want)
			}
		}
	}
	for _, i := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, -1, -10} {
		if got, want := string(appendInt(nil, i)), strconv.FormatInt(i, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", i, got, want)
		}
	}
}

func TestEightDigitsReadsTheLeadingDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	others := []byte{'/', ':', '?', '@', ',', '}', ' ', '-', '.', 'e', 0x00, 0x39 + 0x80, 0xf9, 0xfa, 0xff}
	for range 200000 {
		var b [8]byte
		for k := range b {
			if rng.IntN(3) > 0 {
				b[k] = byte('0' + rng.IntN(10))
			} else {
				b[k] = others[rng.IntN(len(others))]
			}
		}
		want, n := uint64(0), 0
		for n < 8 && isDigit(b[n]) {
			want = want*10 + uint64(b[n]-'0')
			n++
		}
		v, got := eightDigits(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
		if got != n || (n < 8 && v != want) {
			t.Fatalf("eightDigits(%q) = %d, %d digits; want %d, %d", b[:], v, got, want, n)
		}
	}
}
