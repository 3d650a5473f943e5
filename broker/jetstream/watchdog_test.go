package jetstream

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// seqMsg is a delivered message that knows only its stream sequence.
type seqMsg struct {
	jetstream.Msg
	seq uint64
}

func (m seqMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}}, nil
}

func seqOf(t *testing.T, m jetstream.Msg) uint64 {
	t.Helper()
	md, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	return md.Sequence.Stream
}

func TestDeliveryDropsAReplacedConsumersMessagesAndRenewsAfterTheLastHandedOn(t *testing.T) {
	var d delivery
	buf := make(chan jetstream.Msg, 10)
	closed := make(chan struct{})
	g1 := d.begin(5)
	if got := d.last(); got != 4 {
		t.Fatalf("before any message, last is %d, want 4", got)
	}
	d.hand(g1, seqMsg{seq: 5}, buf, closed)
	d.hand(g1, seqMsg{seq: 6}, buf, closed)
	g2, from := d.renew()
	if g2 == g1 || from != 7 {
		t.Fatalf("renew gave generation %d from %d, want a new generation from 7", g2, from)
	}
	d.hand(g1, seqMsg{seq: 7}, buf, closed) // the replaced consumer goes on
	d.hand(g2, seqMsg{seq: 7}, buf, closed)
	close(buf)
	var got []uint64
	for m := range buf {
		got = append(got, seqOf(t, m))
	}
	if want := []uint64{5, 6, 7}; len(got) != len(want) || got[0] != 5 || got[1] != 6 || got[2] != 7 {
		t.Fatalf("handed on %v, want %v", got, want)
	}
	if d.last() != 7 {
		t.Errorf("last is %d, want 7", d.last())
	}
}

// A model of the watchdog racing the consumers: each generation's
// consumer hands on consecutive sequences from where it started, and goes
// on after it is replaced; Read's buffer is small, so hand-offs wait. The
// buffer must receive every sequence once, in order, whatever the
// interleaving.
func TestDeliveryHandsEverySequenceOnceInOrderWhileConsumersAreReplaced(t *testing.T) {
	const total = 3000
	for round := range 60 {
		rng := rand.New(rand.NewPCG(uint64(round), 1))
		var d delivery
		buf := make(chan jetstream.Msg, 1+rng.IntN(4))
		closed := make(chan struct{})
		var wg sync.WaitGroup
		consumer := func(gen, from uint64) {
			defer wg.Done()
			for seq := from; seq <= total; seq++ {
				d.hand(gen, seqMsg{seq: seq}, buf, closed)
			}
		}
		wg.Add(1)
		go consumer(d.begin(1), 1)
		replacer := make(chan struct{})
		go func() {
			defer close(replacer)
			for range 300 {
				if rng.IntN(2) == 0 {
					runtime.Gosched()
				}
				gen, from := d.renew()
				wg.Add(1)
				go consumer(gen, from)
			}
		}()
		for want := uint64(1); want <= total; want++ {
			if want%7 == 0 {
				runtime.Gosched() // let hand-offs queue up
			}
			if got := seqOf(t, <-buf); got != want {
				close(closed)
				t.Fatalf("round %d: handed on %d, want %d", round, got, want)
			}
		}
		<-replacer
		close(closed) // releases replaced consumers still waiting
		wg.Wait()
		select {
		case m := <-buf:
			t.Fatalf("round %d: sequence %d handed on after the last", round, seqOf(t, m))
		default:
		}
	}
}
