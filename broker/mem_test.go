package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/recovery"
)

// memOutput is an in-memory output with transactions and fencing by
// epoch, like a Kafka topic with a transactional producer.
type memOutput struct {
	mu    sync.Mutex
	recs  []memRec
	epoch int
	// failWrite, when set, is called with each Write's records; it may
	// return an error before the commit (commit false) or after it.
	failWrite func(recs []Outgoing) (err error, afterCommit bool)
	opens     int
	// opened, when set, receives a value at each Open (without
	// blocking).
	opened chan struct{}
}

type memRec struct {
	seq        uint64
	db, writer string
	value      []byte
	hasSeq     bool
}

func (o *memOutput) Name() string { return "mem" }

func (o *memOutput) Open(ctx context.Context, st Stamp) (Session, Last, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.epoch++
	o.opens++
	if o.opened != nil {
		select {
		case o.opened <- struct{}{}:
		default:
		}
	}
	var last Last
	if n := len(o.recs); n > 0 {
		r := o.recs[n-1]
		last = Last{Found: true, Seq: r.seq, HasSeq: r.hasSeq, DB: r.db, Writer: r.writer, Value: r.value, Where: fmt.Sprintf("mem offset %d", n-1)}
	}
	return &memSession{o: o, epoch: o.epoch, st: st}, last, nil
}

type memSession struct {
	o     *memOutput
	epoch int
	st    Stamp
}

func (s *memSession) Write(ctx context.Context, recs []Outgoing) error {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	var err error
	after := false
	if s.o.failWrite != nil {
		err, after = s.o.failWrite(recs)
	}
	// The commit checks the epoch, as a transaction coordinator does.
	if s.epoch != s.o.epoch {
		return Fatal(fmt.Errorf("%w: epoch %d, output at %d", ErrFenced, s.epoch, s.o.epoch))
	}
	if err != nil && !after {
		return err
	}
	for _, r := range recs {
		s.o.recs = append(s.o.recs, memRec{seq: r.Seq, db: s.st.DB, writer: s.st.Writer, value: slices.Clone(r.Value), hasSeq: true})
	}
	return err
}

func (s *memSession) Close() error { return nil }

func (o *memOutput) seqs() []uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []uint64
	for _, r := range o.recs {
		out = append(out, r.seq)
	}
	return out
}

// testLog opens a processor in a temporary directory and appends a
// mangled generated stream of times times.
func testLog(t *testing.T, times uint64) (*recovery.Processor, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	p, err := recovery.Open(path, recovery.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var msgs []cdc.Message
	for m := range streamgen.Mangle(streamgen.Gen(streamgen.GenOptions{Seed: 1, Times: times}), streamgen.MangleOptions{Seed: 2, MaxDelay: 8, MaxCopies: 2}) {
		msgs = append(msgs, m)
	}
	if _, err := p.Append(context.Background(), msgs, nil); err != nil {
		t.Fatal(err)
	}
	if p.OutputEnd() < 10 {
		t.Fatalf("only %d output records", p.OutputEnd()-1)
	}
	return p, "db-" + strconv.Itoa(int(times))
}

// checkExactlyOnce asserts that out holds records 1..end-1 once each, in
// order, each equal to the stored record.
func checkExactlyOnce(t *testing.T, p *recovery.Processor, out *memOutput) {
	t.Helper()
	end := p.OutputEnd()
	out.mu.Lock()
	defer out.mu.Unlock()
	if uint64(len(out.recs)) != end-1 {
		t.Fatalf("output holds %d records, want %d", len(out.recs), end-1)
	}
	i := 0
	for rec, err := range p.Output(context.Background(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		got := out.recs[i]
		if got.seq != rec.Seq || string(got.value) != string(cdc.AppendJSON(nil, &rec.Msg)) {
			t.Fatalf("output record %d is seq %d %s, want seq %d %s", i, got.seq, got.value, rec.Seq, cdc.AppendJSON(nil, &rec.Msg))
		}
		if i++; uint64(i) == end-1 {
			return
		}
	}
}

func drain(t *testing.T, f *Forwarder) {
	t.Helper()
	if err := f.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestForwarderSendsEveryRecordOnceEndingTransactionsAtProgress(t *testing.T) {
	p, db := testLog(t, 200)
	out := &memOutput{}
	var sizes []int
	out.failWrite = func(recs []Outgoing) (error, bool) {
		sizes = append(sizes, len(recs))
		var m cdc.Message
		if err := cdc.ParseJSON(recs[len(recs)-1].Value, &m); err != nil || m.Kind != cdc.KindProgress {
			t.Errorf("transaction of %d ends at %s (%v)", len(recs), recs[len(recs)-1].Value, err)
		}
		return nil, false
	}
	f := NewForwarder(p, out, ForwarderOptions{DatabaseID: db, BatchRecords: 50})
	drain(t, f)
	checkExactlyOnce(t, p, out)
	if len(sizes) < 3 {
		t.Errorf("transactions of %v records: want several", sizes)
	}
	if f.Acked() != p.OutputEnd()-1 || f.Lag() != 0 {
		t.Errorf("acked %d lag %d, end %d", f.Acked(), f.Lag(), p.OutputEnd())
	}
	// A restarted forwarder verifies the last record and sends nothing.
	drain(t, NewForwarder(p, out, ForwarderOptions{DatabaseID: db}))
	checkExactlyOnce(t, p, out)
}

func TestForwarderResumesAfterFailedAndAmbiguousCommits(t *testing.T) {
	p, db := testLog(t, 300)
	out := &memOutput{}
	n := 0
	out.failWrite = func(recs []Outgoing) (error, bool) {
		n++
		switch n % 3 {
		case 1:
			return errors.New("broker down"), false // nothing committed
		case 2:
			return errors.New("commit response lost"), true // committed
		}
		return nil, false
	}
	f := NewForwarder(p, out, ForwarderOptions{DatabaseID: db, BatchRecords: 40, RetryMin: 1, RetryMax: 1})
	drain(t, f)
	checkExactlyOnce(t, p, out)
	if out.opens < 5 {
		t.Errorf("%d sessions: the faults did not bite", out.opens)
	}
}

func TestForwarderRefusesAForeignOrStaleOutputUnlessTakeover(t *testing.T) {
	p, db := testLog(t, 100)
	for _, c := range []struct {
		name string
		recs []memRec
		want error
		from uint64 // where takeover resumes
	}{
		{"another database's record", []memRec{{seq: 3, db: "other", value: nil, hasSeq: true}}, ErrForeignOutput, 4},
		{"a different value", []memRec{{seq: 3, db: db, value: []byte(`{"x":1}`), hasSeq: true}}, ErrForeignOutput, 4},
		{"a record without a sequence number", []memRec{{value: []byte("hello")}}, ErrForeignOutput, 1},
		{"a record ahead of the database", []memRec{{seq: 1 << 40, db: db, hasSeq: true}}, ErrOutputAhead, 1<<40 + 1},
	} {
		out := &memOutput{recs: slices.Clone(c.recs)}
		err := NewForwarder(p, out, ForwarderOptions{DatabaseID: db}).Drain(context.Background())
		if !errors.Is(err, c.want) || !IsFatal(err) || len(out.recs) != len(c.recs) {
			t.Errorf("%s: %v, %d records; want %v and nothing written", c.name, err, len(out.recs), c.want)
		}
		out = &memOutput{recs: slices.Clone(c.recs)}
		f := NewForwarder(p, out, ForwarderOptions{DatabaseID: db, Takeover: true})
		if err := f.Drain(context.Background()); err != nil {
			t.Errorf("%s, takeover: %v", c.name, err)
		}
		want := len(c.recs)
		if c.from < p.OutputEnd() {
			want += int(p.OutputEnd() - c.from)
		}
		if seqs := out.seqs(); len(seqs) != want || len(seqs) > len(c.recs) && seqs[len(c.recs)] != c.from {
			t.Errorf("%s, takeover: output %v..., want %d records resuming at %d", c.name, seqs[:min(len(seqs), 3)], want, c.from)
		}
	}
}

func TestForwarderFencedByANewerWriterStops(t *testing.T) {
	p, db := testLog(t, 200)
	out := &memOutput{}
	older := NewForwarder(p, out, ForwarderOptions{DatabaseID: db, BatchRecords: 20, RetryMin: 1})
	var newer *Forwarder
	writes := 0
	out.opened = make(chan struct{}, 4)
	out.failWrite = func(recs []Outgoing) (error, bool) {
		if writes++; writes == 3 {
			// The newer writer starts while the older is between
			// transactions: its Open fences the older.
			out.mu.Unlock()
			newer = NewForwarder(p, out, ForwarderOptions{DatabaseID: db, BatchRecords: 20})
			<-out.opened // the older's own Open
			go func() { _ = newer.Drain(context.Background()) }()
			<-out.opened
			out.mu.Lock()
		}
		return nil, false
	}
	err := older.Drain(context.Background())
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("older writer: %v, want ErrFenced", err)
	}
	// Let the newer finish.
	out.mu.Lock()
	out.failWrite = nil
	out.mu.Unlock()
	drain(t, NewForwarder(p, out, ForwarderOptions{DatabaseID: db}))
	checkExactlyOnce(t, p, out)
}

func TestForwarderStopsWhenAnotherWriterWroteSinceItsLastSession(t *testing.T) {
	p, db := testLog(t, 200)
	out := &memOutput{}
	a := NewForwarder(p, out, ForwarderOptions{DatabaseID: db, BatchRecords: 20, RetryMin: 1})
	n := 0
	out.failWrite = func(recs []Outgoing) (error, bool) {
		if n++; n == 2 {
			// Another writer (of an output without fencing) appends
			// the next records, then this write fails.
			out.recs = append(out.recs, memRec{seq: recs[0].Seq, db: db, writer: "someone-else", value: slices.Clone(recs[0].Value), hasSeq: true})
			return errors.New("wrong last sequence"), false
		}
		return nil, false
	}
	if err := a.Drain(context.Background()); !errors.Is(err, ErrFenced) {
		t.Fatalf("got %v, want ErrFenced", err)
	}
}

func TestThrottleWaitsForTheForwarder(t *testing.T) {
	p, db := testLog(t, 100)
	out := &memOutput{}
	f := NewForwarder(p, out, ForwarderOptions{DatabaseID: db})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := Throttle(nopSource{}, f, 5)
	if err := src.Read(ctx, &recovery.SourceBatch{Max: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("lag %d > 5: Read = %v, want it to wait", f.Lag(), err)
	}
	drain(t, f)
	if err := src.Read(context.Background(), &recovery.SourceBatch{Max: 1}); err != errNop {
		t.Fatalf("caught up: Read = %v, want the source's", err)
	}
}

var errNop = errors.New("nop read")

type nopSource struct{}

func (nopSource) Name() string                                      { return "" }
func (nopSource) Start(context.Context, []byte) error               { return nil }
func (nopSource) Read(context.Context, *recovery.SourceBatch) error { return errNop }
func (nopSource) Close() error                                      { return nil }
