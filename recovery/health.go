package recovery

import (
	"github.com/cdclog/cdclog/cdc"
)

// Err returns nil while the processor runs; once it has stopped, why: the
// error that stopped it (wrapping ErrFailed after a storage failure, or
// ErrLiveOutput), or ErrClosed once Close has begun. A health check reads
// it.
func (p *Processor) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.failed != nil:
		return p.failed
	case p.closed:
		return ErrClosed
	}
	return nil
}

// ConsumerPositions returns the committed position of every registered
// consumer (see Consumers), by name: the sequence number of the next
// record it will read. A consumer's lag is OutputEnd() less its position.
func (p *Processor) ConsumerPositions() (map[string]uint64, error) {
	list, err := p.Consumers()
	if err != nil {
		return nil, err
	}
	pos := make(map[string]uint64, len(list))
	for _, c := range list {
		pos[c.Name] = c.Next
	}
	return pos, nil
}

// Policy returns the processor's policy for bad messages (Options.OnError),
// which a producer applies to input it cannot decode.
func (p *Processor) Policy() cdc.ErrorPolicy { return p.opts.OnError }
