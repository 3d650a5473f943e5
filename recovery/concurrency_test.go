package recovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// Eight producers each send a mangled copy of a share of one stream (and a
// bit of the others' shares); two consumers read concurrently. Each
// consumer must see exactly the in-memory receiver's information, in
// order, once.
func TestConcurrentProducersAndConsumersSeeEveryRecordOnce(t *testing.T) {
	const producers, times = 8, 2000
	clean := cleanStream(11, 0, times)
	path := dbPath(t)
	p := openTest(t, path, Options{BatchMessages: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var share []cdc.Message
			for j, m := range clean {
				if j%producers == i || j%(producers+3) == i {
					share = append(share, m)
				}
			}
			share = mangled(uint64(i), share)
			for k := 0; k < len(share); k += 37 {
				if _, err := p.Append(ctx, share[k:min(len(share), k+37)], nil); err != nil {
					t.Errorf("producer %d: %v", i, err)
					return
				}
			}
		}(i)
	}
	consumed := make([][]Record, 2)
	var cwg sync.WaitGroup
	for c := range consumed {
		cwg.Add(1)
		go func(c int) {
			defer cwg.Done()
			cons, err := p.Consumer(fmt.Sprintf("c%d", c))
			if err != nil {
				t.Error(err)
				return
			}
			for rec, err := range cons.Records(ctx) {
				if err != nil {
					t.Errorf("consumer %d: %v", c, err)
					return
				}
				consumed[c] = append(consumed[c], rec)
				if rec.Msg.Kind == cdc.KindProgress && rec.Msg.Progress.Upper == times {
					cons.Commit(ctx, rec.Seq)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	cwg.Wait()
	p.Close()
	want := storedOutput(t, path)
	for c, recs := range consumed {
		var got []byte
		for i, r := range recs {
			if r.Seq != uint64(i+1) {
				t.Fatalf("consumer %d: record %d has seq %d", c, i, r.Seq)
			}
			got = append(cdc.AppendJSON(got, &r.Msg), '\n')
		}
		if string(got) != string(want) {
			t.Fatalf("consumer %d saw %d bytes, the log holds %d", c, len(got), len(want))
		}
	}
	checkInformation(t, want, clean)
}

// checkInformation checks that a clean stream carries exactly the updates
// of the input, each once, and covers every time.
func checkInformation(t *testing.T, out []byte, clean []cdc.Message) {
	t.Helper()
	want := map[string]bool{}
	for _, m := range clean {
		if m.Kind == cdc.KindUpdate {
			want[string(cdc.AppendJSON(nil, &m))] = true
		}
	}
	r := cdc.NewReader(bytesReader(out), cdc.JSONL, "out")
	var m cdc.Message
	for {
		err := r.Next(&m)
		if err != nil {
			break
		}
		if m.Kind == cdc.KindUpdate {
			k := string(cdc.AppendJSON(nil, &m))
			if !want[k] {
				t.Fatalf("output update %s not in the input, or repeated", k)
			}
			delete(want, k)
		}
	}
	if len(want) > 0 {
		t.Fatalf("%d input updates missing from the output", len(want))
	}
}

func TestCloseWhileAppendingLosesNothingSilently(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{BatchMessages: 200})
	ctx := context.Background()
	type outcome struct {
		msgs []cdc.Message
		err  error
	}
	results := make(chan outcome, 10000)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			msgs := cleanStream(uint64(i), uint64(i)*10000, uint64(i)*10000+400)
			for k := 0; k < len(msgs); k += 10 {
				chunk := msgs[k:min(len(msgs), k+10)]
				_, err := p.Append(ctx, chunk, nil)
				results <- outcome{chunk, err}
				if err != nil {
					return
				}
			}
		}(i)
	}
	time.Sleep(20 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	r, _ := OpenReader(path, 0)
	defer r.Close()
	inWAL := map[string]bool{}
	r.WAL(0, ^uint64(0), func(e *WALEntry) error {
		inWAL[string(cdc.AppendJSON(nil, &e.Msg))] = true
		return nil
	})
	committed, refused := 0, 0
	for o := range results {
		if o.err != nil {
			if !errors.Is(o.err, ErrClosed) {
				t.Fatalf("unexpected error %v", o.err)
			}
			refused++
			continue
		}
		committed++
		for _, m := range o.msgs {
			if !inWAL[string(cdc.AppendJSON(nil, &m))] {
				t.Fatalf("acknowledged message %v not in the WAL", m)
			}
		}
	}
	if committed == 0 || refused == 0 {
		t.Logf("committed %d, refused %d (timing-dependent)", committed, refused)
	}
}
