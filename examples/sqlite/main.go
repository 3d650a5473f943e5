// Command sqlite is cdclog's exactly-once example: it ingests a CDC
// stream (duplicated and reordered) into a cdclog database, and applies
// the clean stream to a SQLite table, keeping the sequence number of the
// last record applied in the same SQLite transaction as the changes. Kill
// it at any instant and run it again: the table ends exactly as if the
// demangled stream had been applied once.
//
//	go run ./sqlite -db state.db -sqlite view.sqlite -in mangled.jsonl
//
// It ingests the input file to its end (resuming where the last run
// committed), applies every record released, and exits; the table then
// holds the collection as of the frontier printed.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cdclog/cdclog/input"
	"github.com/cdclog/cdclog/recovery"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

func main() {
	dbPath := flag.String("db", "state.db", "cdclog database `PATH`")
	sqlitePath := flag.String("sqlite", "view.sqlite", "SQLite database `PATH` the stream is applied to")
	in := flag.String("in", "", "input `FILE`: a CDC stream in JSON Lines, duplicated and reordered as it may be")
	step := flag.Int("commit-records", 1000, "commit the SQLite transaction at the first step end after `N` records")
	flag.Parse()
	if *in == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: sqlite -db PATH -sqlite PATH -in FILE [-commit-records N]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dbPath, *sqlitePath, *in, *step); err != nil {
		fmt.Fprintln(os.Stderr, "sqlite:", err)
		os.Exit(1)
	}
}

// run ingests in until its end and applies the clean stream to the SQLite
// database until every committed record is in it.
func run(ctx context.Context, dbPath, sqlitePath, in string, step int) error {
	db, err := openSQLite(ctx, sqlitePath)
	if err != nil {
		return err
	}
	defer db.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := recovery.Open(dbPath, recovery.Options{Logger: log})
	if err != nil {
		return err
	}
	defer p.Close()
	src, err := input.Open(in, input.FileOptions{Logger: log})
	if err != nil {
		return err
	}
	defer src.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a, err := newApplier(ctx, db, step)
	if err != nil {
		return err
	}
	applied := make(chan error, 1)
	go func() { applied <- a.run(ctx, p) }()
	if _, err := p.Ingest(ctx, src, recovery.IngestOptions{}); err != nil {
		return fmt.Errorf("ingest %s: %w", in, err)
	}
	// Everything is committed: stop once the table holds it all.
	end := p.OutputEnd()
	for a.committed.Load()+1 < end {
		select {
		case err := <-applied:
			return fmt.Errorf("apply: %w", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-applied; !errors.Is(err, context.Canceled) {
		return fmt.Errorf("apply: %w", err)
	}
	pos, err := readPosition(context.Background(), db)
	if err != nil {
		return err
	}
	if pos.Seq+1 < end {
		return fmt.Errorf("interrupted at record %d of %d", pos.Seq, end-1)
	}
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM collection`).Scan(&rows); err != nil {
		return err
	}
	asOf := "as of frontier " + pos.Frontier
	if pos.Complete {
		asOf = "the stream is complete"
	}
	fmt.Printf("applied records 1 to %d (%d updates): %d rows, %s\n", pos.Seq, pos.Updates, rows, asOf)
	return nil
}

// openSQLite opens the SQLite database and creates its tables. WAL mode
// with synchronous=FULL makes every commit durable, as cdclog's are.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one writer
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("create tables in %s: %w", path, err)
	}
	return db, nil
}
