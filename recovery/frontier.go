package recovery

// Frontier returns the frontier as of the last commit: every time below t
// is complete and its output committed. complete is set once every time
// is (t is then meaningless). It takes one lock and no transaction, so a
// progress display may call it after every batch.
func (p *Processor) Frontier() (t uint64, complete bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.Frontier, p.committed.Done
}

// Frontier returns the database's committed frontier, as Processor.Frontier.
func (r *Reader) Frontier() (t uint64, complete bool) { return r.cp.Frontier, r.cp.Done }

// WALFloor returns the frontier at the last gc: the WAL no longer holds
// every message below it, so Rederive and Verify cover only the output from
// there on. It is 0 when gc never dropped anything.
func (r *Reader) WALFloor() uint64 { return r.cp.WALFloor }
