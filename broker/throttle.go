package broker

import (
	"context"

	"github.com/cdclog/cdclog/recovery"
)

// Throttle wraps src so that each Read first waits while the forwarder is
// more than maxLag records behind the stored output log: backpressure on
// the input instead of an output log that grows without bound while the
// output broker is down. What was read before is committed meanwhile, so
// nothing waits on the wait but the next Read; since the lag is looked at
// only then, it can pass maxLag by what a few Reads release. The wrapper passes
// Committed on to src when src is an Acknowledger.
func Throttle(src recovery.Source, f *Forwarder, maxLag uint64) recovery.Source {
	return &throttled{Source: src, f: f, maxLag: maxLag}
}

type throttled struct {
	recovery.Source
	f      *Forwarder
	maxLag uint64
}

func (t *throttled) Read(ctx context.Context, b *recovery.SourceBatch) error {
	if err := t.f.WaitLag(ctx, t.maxLag); err != nil {
		return err
	}
	return t.Source.Read(ctx, b)
}

// Unwrap returns the source it throttles.
func (t *throttled) Unwrap() recovery.Source { return t.Source }

func (t *throttled) Committed(cursor []byte) {
	if a, ok := t.Source.(recovery.Acknowledger); ok {
		a.Committed(cursor)
	}
}
