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
