package slab

import (
	"bytes"
	"testing"
)

func TestKeptCopiesStayIntactAsTheBlockFills(t *testing.T) {
	var s []byte
	var kept [][]byte
	var want []string
	for i := range 100 {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, i%13)
		kept = append(kept, Keep(&s, v, 16))
		want = append(want, string(v))
		for j := range v { // the caller may reuse v
			v[j] = '!'
		}
	}
	for i, k := range kept {
		if string(k) != want[i] || cap(k) != len(k) {
			t.Fatalf("copy %d is %q (cap %d), want %q", i, k, cap(k), want[i])
		}
	}
	if big := Keep(&s, make([]byte, 40), 16); len(big) != 40 {
		t.Fatalf("a value larger than the block size: %d bytes kept", len(big))
	}
}
