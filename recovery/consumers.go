package recovery

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// ConsumerInfo describes a registered consumer: what Processor.Consumers,
// Reader.Consumers and `cdclog inspect consumers` list. The JSON field
// names are stable.
type ConsumerInfo struct {
	Name string `json:"name"`
	// Next is its committed position: the sequence number of the record
	// it reads first after a restart (the record after the last one it
	// committed).
	Next uint64 `json:"next"`
	// Lag counts the committed records from Next on: OutputEnd() - Next.
	Lag uint64 `json:"lag"`
	// Open is set while a Consumer of this name is open in the processor
	// that answered (always false from a Reader: no processor runs then).
	Open bool `json:"open"`
}

// Consumers lists the registered consumers, by name, with their
// committed positions and lag as of the last commit. It reads one small
// bucket in a read transaction (a few microseconds for a few consumers),
// so a metrics scrape may call it.
func (p *Processor) Consumers() ([]ConsumerInfo, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	p.mu.Lock()
	end := p.committed.NextOutput
	open := p.openConsumers()
	p.mu.Unlock()
	var list []ConsumerInfo
	err := p.db.View(func(tx *bolt.Tx) (err error) {
		list, err = listConsumers(tx, end)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list consumers: %w", err)
	}
	for i := range list {
		list[i].Open = open[list[i].Name]
	}
	return list, nil
}

// openConsumers returns the set of open consumers' names; p.mu is held.
func (p *Processor) openConsumers() map[string]bool {
	open := make(map[string]bool, len(p.consumers))
	for name := range p.consumers {
		open[name] = true
	}
	return open
}

// Consumers lists the registered consumers, as Processor.Consumers does.
func (r *Reader) Consumers() ([]ConsumerInfo, error) {
	var list []ConsumerInfo
	err := r.db.View(func(tx *bolt.Tx) (err error) {
		list, err = listConsumers(tx, r.cp.NextOutput)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list consumers: %w", err)
	}
	return list, nil
}

// listConsumers reads every consumer's position, sorted by name (bbolt's
// key order), with its lag behind end.
func listConsumers(tx *bolt.Tx, end uint64) ([]ConsumerInfo, error) {
	l, err := readLayout(tx)
	if err != nil {
		return nil, err
	}
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		return nil, corruptRecord(store.BucketConsumers, nil, "bucket missing")
	}
	list := []ConsumerInfo{}
	err = b.ForEach(func(k, v []byte) error {
		next, _, err := decodeConsumer(&l, k, v)
		if err != nil {
			return err
		}
		list = append(list, ConsumerInfo{Name: string(k), Next: next, Lag: end - min(next, end)})
		return nil
	})
	return list, err
}

// DeleteConsumer removes the named consumer's position: it is no longer
// listed, and gc's retention no longer keeps records for it. A consumer
// of that name opened later starts anew, at the first record the output
// log holds. It is refused with ErrConsumerBusy while a Consumer of that
// name is open, and with ErrConsumerNotFound for a name never registered.
func (p *Processor) DeleteConsumer(ctx context.Context, name string) error {
	if err := p.enter(); err != nil {
		return err
	}
	defer p.leave()
	if err := p.holdConsumer(name); err != nil {
		return fmt.Errorf("delete consumer: %w", err)
	}
	defer p.releaseConsumer(name)
	err := p.maintain(ctx, func(tx *bolt.Tx, _ *commitState) error { return deleteConsumer(tx, name) }, nil)
	if err != nil {
		return fmt.Errorf("delete consumer %q: %w", name, err)
	}
	return nil
}

// DeleteConsumer removes the named consumer from the database at path,
// which no processor may hold (it waits up to lockTimeout for one to
// close, as GC does): what `cdclog consumer delete` does. A name never
// registered is ErrConsumerNotFound.
func DeleteConsumer(path, name string, lockTimeout time.Duration) error {
	db, err := store.Open(path, store.Options{LockTimeout: lockTimeout, NoCreate: true})
	if err != nil {
		return err
	}
	if err := upgrade(db, slog.Default()); err != nil {
		db.Close()
		return fmt.Errorf("delete consumer %q: %w", name, err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return deleteConsumer(tx, name) })
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("delete consumer %q: %w", name, err)
	}
	return nil
}

// deleteConsumer deletes the named consumer's position, or fails with
// ErrConsumerNotFound naming the registered ones.
func deleteConsumer(tx *bolt.Tx, name string) error {
	_, ok, err := readConsumer(tx, name)
	if err != nil {
		return err
	}
	if !ok {
		list, err := listConsumers(tx, 0)
		if err != nil {
			return err
		}
		names := make([]string, len(list))
		for i, c := range list {
			names[i] = c.Name
		}
		if len(names) == 0 {
			return fmt.Errorf("%w (the database has none)", ErrConsumerNotFound)
		}
		return fmt.Errorf("%w (the database has %s)", ErrConsumerNotFound, strings.Join(slices.Sorted(slices.Values(names)), ", "))
	}
	return tx.Bucket(store.BucketConsumers).Delete([]byte(name))
}

// A consumer's position is stored in the consumers bucket under its name:
// the sequence number of the next record it will read (8 bytes BE),
// sealed with a CRC-32C of the name and those 8 bytes (a schema 1
// database stored the 8 bytes alone).

// consumerValue encodes a consumer's position.
func consumerValue(name string, next uint64) []byte {
	return checksum.Seal([]byte(name), binary.BigEndian.AppendUint64(nil, next))
}

// putConsumer stores the named consumer's position.
func putConsumer(tx *bolt.Tx, name string, next uint64) error {
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		return corruptRecord(store.BucketConsumers, nil, "bucket missing")
	}
	return b.Put([]byte(name), consumerValue(name, next))
}

// readConsumer reads the named consumer's position; ok is false when it
// never committed one.
func readConsumer(tx *bolt.Tx, name string) (next uint64, ok bool, err error) {
	l, err := readLayout(tx)
	if err != nil {
		return 0, false, err
	}
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		return 0, false, corruptRecord(store.BucketConsumers, nil, "bucket missing")
	}
	key := []byte(name)
	v := b.Get(key)
	if v == nil {
		// A damaged key would make a consumer look new, and resume at
		// record 1: every position is verified (there are few) before
		// taking the name as new.
		err := b.ForEach(func(k, v []byte) error { _, _, err := decodeConsumer(&l, k, v); return err })
		return 1, false, err
	}
	return decodeConsumer(&l, key, v)
}

// decodeConsumer verifies and decodes a stored position.
func decodeConsumer(l *layout, key, v []byte) (next uint64, ok bool, err error) {
	p, err := l.unseal(store.BucketConsumers, key, v)
	if err != nil {
		return 0, false, err
	}
	if len(p) != 8 || binary.BigEndian.Uint64(p) == 0 {
		return 0, false, corruptRecord(store.BucketConsumers, key, "position is not a record number")
	}
	return binary.BigEndian.Uint64(p), true, nil
}

// ConsumerPosition returns the named consumer's committed position: the
// sequence number of the next record it will read, 1 (and ok false) when
// it never committed.
func (r *Reader) ConsumerPosition(name string) (next uint64, ok bool, err error) {
	err = r.db.View(func(tx *bolt.Tx) error {
		next, ok, err = readConsumer(tx, name)
		return err
	})
	return next, ok, err
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
