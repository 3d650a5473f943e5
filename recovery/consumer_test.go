package recovery

import (
	"context"
	"errors"
	"testing"
)

// consumerFixture opens a processor holding the output of a short stream.
func consumerFixture(t *testing.T) (*Processor, string) {
	t.Helper()
	path := dbPath(t)
	p := openTest(t, path, Options{})
	appendAll(t, p, cleanStream(41, 0, 20), 100)
	if p.OutputEnd() < 5 {
		t.Fatalf("only %d output records", p.OutputEnd()-1)
	}
	return p, path
}

func TestConsumerCommitRefusesZeroThePastEndAndGoingBackwards(t *testing.T) {
	p, path := consumerFixture(t)
	ctx := context.Background()
	c, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	end := p.OutputEnd()
	if err := c.Commit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		seq  uint64
		want error
	}{
		{"zero", 0, ErrCommitRange},
		{"the output end", end, ErrCommitRange},
		{"far past the end", end + 1000, ErrCommitRange},
		{"backwards", 2, ErrCommitBackwards},
		{"backwards to the first", 1, ErrCommitBackwards},
	}
	for _, tc := range cases {
		if err := c.Commit(ctx, tc.seq); !errors.Is(err, tc.want) {
			t.Errorf("%s: Commit(%d) = %v, want %v", tc.name, tc.seq, err, tc.want)
		}
	}
	// Committing the same record again, and the last record, are fine.
	for _, seq := range []uint64{3, end - 1} {
		if err := c.Commit(ctx, seq); err != nil {
			t.Errorf("Commit(%d): %v", seq, err)
		}
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
		t.Fatalf("resumed at %d, want %d: a refused commit moved the position", c.Position(), end)
	}
}

func TestAConsumerNameIsHeldUntilTheConsumerIsClosed(t *testing.T) {
	p, _ := consumerFixture(t)
	defer p.Close()
	a, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Consumer("a"); !errors.Is(err, ErrConsumerBusy) {
		t.Fatalf("second Consumer(a) = %v, want ErrConsumerBusy", err)
	}
	if b, err := p.Consumer("b"); err != nil {
		t.Fatalf("another name: %v", err)
	} else {
		b.Close()
	}
	if err := a.Commit(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := a.Commit(context.Background(), 3); !errors.Is(err, ErrClosed) {
		t.Fatalf("Commit after Consumer.Close = %v, want ErrClosed", err)
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Consumer.Close = %v, want ErrClosed", err)
	}
	again, err := p.Consumer("a")
	if err != nil {
		t.Fatalf("Consumer(a) after Close: %v", err)
	}
	if again.Position() != 3 {
		t.Fatalf("reopened at %d, want 3", again.Position())
	}
}

func TestAConsumerNameMustPrintAsItself(t *testing.T) {
	p, _ := consumerFixture(t)
	defer p.Close()
	for name, want := range map[string]string{
		"":            `consumer name "" is empty or all white space`,
		" \t":         `consumer name " \t" is empty or all white space`,
		"\xff":        `consumer name "\xff" is not UTF-8 text`,
		"a\nb":        `consumer name "a\nb" holds a control character`,
		"billing\x1b": `consumer name "billing\x1b" holds a control character`,
	} {
		if c, err := p.Consumer(name); c != nil || err == nil || err.Error() != want {
			t.Errorf("Consumer(%q) = %v, %v; want %s", name, c, err, want)
		}
	}
	for _, name := range []string{"billing", "façade 2", "日本"} {
		c, err := p.Consumer(name)
		if err != nil {
			t.Fatalf("Consumer(%q): %v", name, err)
		}
		c.Close()
	}
}

func TestEveryMethodReturnsErrClosedAfterClose(t *testing.T) {
	p, _ := consumerFixture(t)
	ctx := context.Background()
	c, err := p.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{}
	_, checks["Append"] = p.Append(ctx, cleanStream(1, 20, 21), nil)
	_, checks["Submit"] = p.Submit(ctx, Request{})
	_, checks["Consumer"] = p.Consumer("b")
	_, checks["Status"] = p.Status()
	checks["Consumer.Commit"] = c.Commit(ctx, 1)
	_, checks["Consumer.Next"] = c.Next(ctx)
	for _, err := range p.Output(ctx, 1) {
		checks["Output"] = err
		break
	}
	checks["Close"] = nil
	if err := p.Close(); err != nil {
		checks["Close"] = err
	}
	for name, err := range checks {
		if name == "Close" {
			if err != nil {
				t.Errorf("second Close: %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}
