package relay

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

// offsetSource is a sliceSource that starts at a byte offset, counts ten
// bytes a message, and records the commits it is told of.
type offsetSource struct {
	*sliceSource
	offset    int64
	started   bool
	committed int
}

func (s *offsetSource) Start(context.Context, []byte) error { s.started = true; return nil }
func (s *offsetSource) Offset() int64                       { return s.offset }
func (s *offsetSource) Committed([]byte)                    { s.committed++ }
func (s *offsetSource) Read(ctx context.Context, b *recovery.SourceBatch) error {
	err := s.sliceSource.Read(ctx, b)
	s.offset += 10 * int64(b.Len())
	return err
}

func TestRunCallsTheStartHooksAroundEachInputsStartWithItsOffset(t *testing.T) {
	p, _ := openProcessor(t)
	msgs := stream(20)
	a := &offsetSource{sliceSource: &sliceSource{name: "a", msgs: msgs}, offset: 500}
	b := &sliceSource{name: "b"} // no Offset: 0
	var events []string
	r := &Run{InTurn: []recovery.Source{a, b}, Logger: quiet,
		BeforeStart: func(src recovery.Source) {
			events = append(events, fmt.Sprintf("before %s started=%v", src.Name(), a.started && src == recovery.Source(a)))
		},
		OnStart: func(src recovery.Source) {
			events = append(events, fmt.Sprintf("start %s at %d", src.Name(), Offset(src)))
		},
		OnRead: func(src recovery.Source, _ *recovery.SourceBatch) {
			if src == recovery.Source(a) && Offset(src) <= 500 {
				t.Errorf("OnRead with a at %d, want past 500", Offset(src))
			}
		}}
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want := "before a started=false; start a at 500; before b started=false; start b at 0"
	if got := strings.Join(events, "; "); got != want {
		t.Errorf("hooks: %s\nwant:  %s", got, want)
	}
	if a.committed == 0 {
		t.Error("the hooked input was not told of its commits")
	}
	if got := Offset(a); got != 500+10*int64(len(msgs)) {
		t.Errorf("Offset after the run: %d, want %d", got, 500+10*len(msgs))
	}
}
