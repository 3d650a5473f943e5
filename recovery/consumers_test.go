package recovery

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestConsumersListsEveryRegisteredConsumerWithItsLag(t *testing.T) {
	p, path := consumerFixture(t)
	ctx := context.Background()
	end := p.OutputEnd()
	a, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	b, err := p.Consumer("b") // registered by opening, never committed
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	want := []ConsumerInfo{{Name: "a", Next: 4, Lag: end - 4, Open: true}, {Name: "b", Next: 1, Lag: end - 1}}
	got, err := p.Consumers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Consumers() = %+v, want %+v", got, want)
	}
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Consumers, want) {
		t.Fatalf("Status().Consumers = %+v, want %+v", st.Consumers, want)
	}
	p.Close()

	// A reader lists them too, none open; the lag follows new output.
	want[0].Open = false
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Consumers(); err != nil || !slices.Equal(got, want) {
		t.Fatalf("Reader.Consumers() = %+v, %v, want %+v", got, err, want)
	}
	if st, err := r.Status(); err != nil || !slices.Equal(st.Consumers, want) {
		t.Fatalf("Reader.Status().Consumers = %+v, %v, want %+v", st.Consumers, err, want)
	}
}

func TestConsumersIsEmptyNotNilWithoutConsumers(t *testing.T) {
	p := openTest(t, dbPath(t), Options{})
	defer p.Close()
	got, err := p.Consumers()
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Consumers() = %#v, %v; want an empty list", got, err)
	}
}

func TestSeekMovesAConsumerBackOrForwardDurably(t *testing.T) {
	p, path := consumerFixture(t)
	ctx := context.Background()
	end := p.OutputEnd()
	c, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := c.Seek(ctx, 2); err != nil {
		t.Fatalf("Seek back: %v", err)
	}
	if r, err := c.Next(ctx); err != nil || r.Seq != 2 {
		t.Fatalf("Next after Seek(2) = %d, %v", r.Seq, err)
	}
	for _, tc := range []struct {
		seq  uint64
		want error
	}{{0, ErrCommitRange}, {end + 1, ErrCommitRange}, {end + 1000, ErrCommitRange}} {
		if err := c.Seek(ctx, tc.seq); !errors.Is(err, tc.want) {
			t.Errorf("Seek(%d) = %v, want %v", tc.seq, err, tc.want)
		}
	}
	if err := c.Seek(ctx, end); err != nil {
		t.Fatalf("Seek to the output end (the next record): %v", err)
	}
	c.Close()
	p.Close()
	p = openTest(t, path, Options{})
	defer p.Close()
	c, err = p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if c.Position() != end {
		t.Fatalf("resumed at %d after Seek(%d)", c.Position(), end)
	}
	// After a Seek back, Commit may go on from there.
	if err := c.Seek(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, 1); err != nil {
		t.Fatalf("Commit after Seek back: %v", err)
	}
	c.Close()
	if err := c.Seek(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Seek after Close = %v, want ErrClosed", err)
	}
}

func TestDeleteConsumerIsRefusedWhileOpenOrUnknown(t *testing.T) {
	p, path := consumerFixture(t)
	ctx := context.Background()
	c, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteConsumer(ctx, "a"); !errors.Is(err, ErrConsumerBusy) {
		t.Fatalf("DeleteConsumer of an open consumer = %v, want ErrConsumerBusy", err)
	}
	if err := p.DeleteConsumer(ctx, "nobody"); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("DeleteConsumer(nobody) = %v, want ErrConsumerNotFound", err)
	}
	c.Close()
	if err := p.DeleteConsumer(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if list, _ := p.Consumers(); len(list) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
	// The name starts anew.
	c, err = p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if c.Position() != 1 {
		t.Fatalf("a deleted consumer reopened at %d, want 1", c.Position())
	}
	c.Close()
	p.Close()

	// Offline, as cdclog consumer delete does.
	if err := DeleteConsumer(path, "a", 0); err != nil {
		t.Fatal(err)
	}
	if err := DeleteConsumer(path, "a", 0); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("offline delete of a deleted consumer = %v", err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if list, _ := r.Consumers(); len(list) != 0 {
		t.Fatalf("after the offline delete: %+v", list)
	}
}
