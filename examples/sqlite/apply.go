package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// The exactly-once pattern: the table and the sequence number of the last
// record applied are changed in one SQLite transaction, so after a crash
// they agree, and the stream resumes at the record after that number.
// cdclog's database keeps no position for this consumer.

// schema creates the table the stream is applied to (each data value with
// its count, the collection's contents) and the one-row table that holds
// the position.
const schema = `
CREATE TABLE IF NOT EXISTS collection (
	data  TEXT PRIMARY KEY,
	count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cdclog_position (
	id       INTEGER PRIMARY KEY CHECK (id = 1),
	seq      INTEGER NOT NULL, -- the last output record applied
	frontier TEXT NOT NULL,    -- every time below it is in the table
	complete INTEGER NOT NULL, -- the stream is over: every time is in it
	updates  INTEGER NOT NULL  -- updates applied, over all runs
);
INSERT OR IGNORE INTO cdclog_position VALUES (1, 0, '0', 0, 0);
`

// position is the row of cdclog_position.
type position struct {
	Seq      uint64
	Frontier string
	Complete bool
	Updates  uint64
}

// readPosition reads the position the last transaction committed.
func readPosition(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (position, error) {
	var p position
	err := q.QueryRowContext(ctx, `SELECT seq, frontier, complete, updates FROM cdclog_position WHERE id = 1`).
		Scan(&p.Seq, &p.Frontier, &p.Complete, &p.Updates)
	if err != nil {
		return p, fmt.Errorf("read position: %w", err)
	}
	return p, nil
}

// applier applies the clean stream to the table, one transaction per
// group of whole steps: a transaction ends only at a progress record (the
// end of a step), so the table always holds the collection as of a time.
type applier struct {
	db *sql.DB
	// stepRecords is how many records a transaction takes before it
	// commits at the next step's end (it also commits whenever it has
	// caught up with the committed output).
	stepRecords int
	pos         position
	// committed is pos.Seq as of the last commit, for other goroutines.
	committed atomic.Uint64
	// add and drop are the statements an update runs.
	add, drop *sql.Stmt
}

// newApplier prepares the statements that apply updates.
func newApplier(ctx context.Context, db *sql.DB, stepRecords int) (*applier, error) {
	a := &applier{db: db, stepRecords: stepRecords}
	var err error
	a.add, err = db.PrepareContext(ctx, `INSERT INTO collection (data, count) VALUES (?, ?)
		ON CONFLICT (data) DO UPDATE SET count = count + excluded.count`)
	if err == nil {
		a.drop, err = db.PrepareContext(ctx, `DELETE FROM collection WHERE data = ? AND count = 0`)
	}
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return a, nil
}

// run applies the records from the one after the stored position on,
// until ctx ends; it returns ctx's error, or the first failure.
func (a *applier) run(ctx context.Context, p *recovery.Processor) error {
	pos, err := readPosition(ctx, a.db)
	if err != nil {
		return err
	}
	// The position names records of this cdclog database's output: a
	// record past its committed end was never in it, so the table was
	// made from another stream (the cdclog database was replaced, or
	// another one given), and applying this one would add to that.
	if end := p.OutputEnd(); pos.Seq >= end {
		return fmt.Errorf("the SQLite database has applied records 1 to %d, but the cdclog database has committed %d records: "+
			"they are not of the same stream (start both afresh, or give the cdclog database the table was made from)", pos.Seq, end-1)
	}
	a.pos = pos
	a.committed.Store(pos.Seq)
	var tx *sql.Tx
	defer func() {
		if tx != nil {
			tx.Rollback() // an unfinished step: applied again after a restart
		}
	}()
	n := 0
	for rec, err := range p.Output(ctx, a.pos.Seq+1) {
		if err != nil {
			return err
		}
		if tx == nil {
			if tx, err = a.db.BeginTx(ctx, nil); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
		}
		if err := a.apply(ctx, tx, &rec); err != nil {
			return fmt.Errorf("record %d: %w", rec.Seq, err)
		}
		n++
		if rec.Msg.Kind != cdc.KindProgress || n < a.stepRecords && rec.Seq+1 < p.OutputEnd() {
			continue
		}
		if err := a.commit(ctx, tx, rec.Seq); err != nil {
			return err
		}
		tx, n = nil, 0
	}
	return errors.New("output ended") // Output yields an error before it ends
}

// apply makes one record's change inside tx. An update adds its diff to
// its data's count (a row whose count reaches 0 is deleted); a progress
// statement moves the frontier.
func (a *applier) apply(ctx context.Context, tx *sql.Tx, rec *recovery.Record) error {
	m := &rec.Msg
	if m.Kind == cdc.KindProgress {
		a.pos.Frontier = fmt.Sprint(m.Progress.Upper)
		a.pos.Complete = m.Progress.Unbounded
		return nil
	}
	u := &m.Update
	if _, err := tx.StmtContext(ctx, a.add).ExecContext(ctx, string(u.Data), u.Diff); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, a.drop).ExecContext(ctx, string(u.Data)); err != nil {
		return err
	}
	a.pos.Updates++
	return nil
}

// commit stores the position seq with the changes and commits them
// together.
func (a *applier) commit(ctx context.Context, tx *sql.Tx, seq uint64) error {
	a.pos.Seq = seq
	_, err := tx.ExecContext(ctx, `UPDATE cdclog_position SET seq = ?, frontier = ?, complete = ?, updates = ? WHERE id = 1`,
		a.pos.Seq, a.pos.Frontier, a.pos.Complete, a.pos.Updates)
	if err != nil {
		return fmt.Errorf("store position %d: %w", seq, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit through record %d: %w", seq, err)
	}
	a.committed.Store(seq)
	return nil
}
