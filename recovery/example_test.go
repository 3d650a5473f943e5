package recovery_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// tempDB returns a database path in a fresh directory, and its cleanup.
func tempDB() (string, func()) {
	dir, err := os.MkdirTemp("", "cdclog-example")
	if err != nil {
		log.Fatal(err)
	}
	return filepath.Join(dir, "state.db"), func() { os.RemoveAll(dir) }
}

// A duplicated, reordered stream: time 1's update arrives first and twice,
// and time 0's progress statement comes last.
func mangledStream() []cdc.Message {
	return []cdc.Message{
		cdc.NewUpdate([]byte(`"b"`), 1, 1),
		cdc.NewProgress(1, 2, cdc.Count{Time: 1, Count: 1}),
		cdc.NewUpdate([]byte(`"b"`), 1, 1),
		cdc.NewUpdate([]byte(`{"id":7}`), 0, -1),
		cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}),
	}
}

func ExampleOpen() {
	path, cleanup := tempDB()
	defer cleanup()
	p, err := recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	st, err := p.Status()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Reason)
	// Output: waiting for a progress statement covering time 0
}

func ExampleProcessor_Append() {
	path, cleanup := tempDB()
	defer cleanup()
	p, err := recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	// Append returns once the messages are durably committed.
	res, err := p.Append(context.Background(), mangledStream(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("accepted %d, duplicates %d, output records %d\n", res.Accepted, res.Duplicates, res.Output)
	// Output: accepted 4, duplicates 1, output records 3
}

func ExampleProcessor_Output() {
	path, cleanup := tempDB()
	defer cleanup()
	p, err := recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := p.Append(ctx, mangledStream(), nil); err != nil {
		log.Fatal(err)
	}
	// Output blocks for more records until ctx ends; stop after three.
	for rec, err := range p.Output(ctx, 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d %s\n", rec.Seq, cdc.AppendJSON(nil, &rec.Msg))
		if rec.Seq == 3 {
			break
		}
	}
	// Output:
	// 1 {"update":{"data":{"id":7},"time":0,"diff":-1}}
	// 2 {"update":{"data":"b","time":1,"diff":1}}
	// 3 {"progress":{"lower":0,"upper":2,"counts":[{"time":0,"count":1},{"time":1,"count":1}]}}
}

func ExampleConsumer() {
	path, cleanup := tempDB()
	defer cleanup()
	ctx := context.Background()
	p, err := recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := p.Append(ctx, mangledStream(), nil); err != nil {
		log.Fatal(err)
	}
	// Handle one record, commit it, and stop (as a crash would).
	c, _ := p.Consumer("billing")
	rec, _ := c.Next(ctx)
	if err := c.Commit(ctx, rec.Seq); err != nil {
		log.Fatal(err)
	}
	p.Close()

	// After a restart the consumer resumes after its last commit.
	p, err = recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	c, _ = p.Consumer("billing")
	rec, _ = c.Next(ctx)
	fmt.Println(rec.Seq, rec.Msg.String())
	// Output: 2 update("b", t=1, +1)
}

// appliedStore stands for a consumer's own store with transactions
// (SQLite, Postgres, bbolt...): the table the stream is applied to and the
// sequence number of the last record applied, committed together.
type appliedStore struct {
	counts  map[string]int64
	applied uint64
}

// apply is one transaction of the store: the record's change and its
// sequence number, or neither.
func (s *appliedStore) apply(rec recovery.Record) {
	next := appliedStore{counts: maps.Clone(s.counts), applied: rec.Seq}
	if rec.Msg.Kind == cdc.KindUpdate {
		next.counts[string(rec.Msg.Update.Data)] += rec.Msg.Update.Diff
	}
	*s = next // the commit
}

// The exactly-once pattern: the consumer keeps the sequence number of the
// last record it applied in its own transaction, and resumes after it.
// No position is committed in cdclog's database.
func Example_exactlyOnce() {
	path, cleanup := tempDB()
	defer cleanup()
	ctx := context.Background()
	p, err := recovery.Open(path, recovery.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Append(ctx, mangledStream(), nil); err != nil {
		log.Fatal(err)
	}
	store := appliedStore{counts: map[string]int64{}}
	consume := func(upTo uint64) {
		// Resume after the last record the store applied.
		for rec, err := range p.Output(ctx, store.applied+1) {
			if err != nil {
				log.Fatal(err)
			}
			store.apply(rec)
			if rec.Seq == upTo {
				return // as a crash would, at any point
			}
		}
	}
	consume(1)                 // apply record 1, then stop
	consume(p.OutputEnd() - 1) // a restart goes on from record 2
	fmt.Println(store.applied, store.counts)
	// Output: 3 map["b":1 {"id":7}:-1]
}
