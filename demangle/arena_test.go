package demangle

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func posAt(i int) cdc.Pos {
	return cdc.Pos{Source: fmt.Sprint("src", i%3), Line: int64(i), Offset: int64(10 * i)}
}

// TestTheArenaGivesBackWhatItHoldsAndDropsUnusedBlocks: data and
// positions read back as held, also after the blocks of released ones are
// dropped and their numbers reused, and data emitted before a drop stays
// as it was.
func TestTheArenaGivesBackWhatItHoldsAndDropsUnusedBlocks(t *testing.T) {
	var a arena
	var held []heldUpdate
	var emitted [][]byte
	for i := range 20000 {
		data := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%97)
		if i%1000 == 0 {
			data = bytes.Repeat([]byte("x"), 40<<10) // larger than a block
		}
		held = append(held, a.hold(data, int64(i), posAt(i)))
		if i%3 == 0 { // release every third one, after emitting it
			h := held[len(held)-1]
			emitted = append(emitted, a.data(&h))
			a.release(&h)
			held = held[:len(held)-1]
		}
	}
	for _, h := range held {
		i := int(h.diff)
		want := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%97)
		if i%1000 == 0 {
			want = bytes.Repeat([]byte("x"), 40<<10)
		}
		if !bytes.Equal(a.data(&h), want) || a.pos(&h) != posAt(i) {
			t.Fatalf("update %d reads back %q at %v", i, a.data(&h)[:min(10, len(a.data(&h)))], a.pos(&h))
		}
	}
	for k, d := range emitted {
		i := 3 * k
		if !bytes.Equal(d, bytes.Repeat(d[:1], len(d))) || len(d) != len(bytes.Repeat([]byte{0}, 1+i%97)) && i%1000 != 0 {
			t.Fatalf("emitted data %d changed", k)
		}
	}
	for _, h := range held {
		a.release(&h)
	}
	live := 0
	for _, b := range a.blocks {
		if b != nil {
			live++
		}
	}
	if live > 1 {
		t.Fatalf("%d blocks kept once nothing is held (the one being filled may stay)", live)
	}
}

// TestTheArenaGivesBackPositionsOutOfOrder: positions that do not follow
// the first of their block (before it, far beyond it, negative) read back
// as held, also once the block's other updates are released and it is
// filled again.
func TestTheArenaGivesBackPositionsOutOfOrder(t *testing.T) {
	poss := []cdc.Pos{
		{Source: "a", Line: 100, Offset: 5000},
		{Source: "a", Line: 99, Offset: 4000},
		{Source: "b", Line: 101 + maxLineDist, Offset: 5001},
		{Source: "a", Line: 100, Offset: 5000 + maxOffDist + 1},
		{Source: "a", Line: -7, Offset: -9},
		{Source: "a", Line: 1<<63 - 1, Offset: 1<<63 - 1},
		{Source: "a", Line: 100 + maxLineDist, Offset: 5000 + maxOffDist},
	}
	var a arena
	for round := range 3 {
		var held []heldUpdate
		for i, p := range poss {
			held = append(held, a.hold([]byte{byte('a' + i)}, int64(i), p))
		}
		for i := range held {
			if got := a.pos(&held[i]); got != poss[i] {
				t.Fatalf("round %d: update %d at %v, held at %v", round, i, got, poss[i])
			}
		}
		for i := range held {
			a.release(&held[i])
		}
	}
}
