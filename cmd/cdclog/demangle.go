package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/memlimit"
	"github.com/urfave/cli/v2"
)

func demangleCommand() *cli.Command {
	return &cli.Command{
		Name:      "demangle",
		Usage:     "in-memory receiver: mangled CDC stream in, clean CDC stream out",
		UsageText: "cdclog demangle [--start T] [--on-error fail|skip|quarantine] [--quarantine FILE] [--max-memory SIZE] [FILE]",
		Description: `Reads a CDC stream that may be duplicated and reordered (FILE, or stdin when
FILE is absent or "-") and writes the clean stream to stdout: each time's
updates once, in canonical order, released only when that time and every
earlier one are complete, each release followed by one progress statement.
Nothing is stored: use 'cdclog ingest' for a crash-safe run.

What is pending (held for times that are not complete yet) is held in
memory: past 32 MiB, compactly, as it arrived, to be judged when the
frontier comes near. Once the Go heap holds more than --max-memory (default:
half the machine's memory), demangle stops with an error: 'cdclog ingest'
keeps the pending state on disk instead.

A message that contradicts an earlier one (a protocol violation) stops the
run with exit code 3, naming both messages; malformed input stops it with
exit code 1, naming file and line. With --on-error skip such messages are
counted, reported on stderr and dropped; with --on-error quarantine they are
also written to the --quarantine file as JSON Lines.

Examples:
   cdclog gen --times 1000 | cdclog mangle | cdclog demangle
   cdclog demangle captured.jsonl > clean.jsonl
   cdclog --in-format msgpack demangle captured.mp > clean.jsonl`,
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T`: times below it count as complete and already emitted"},
			onErrorFlag(),
			&cli.StringFlag{Name: "quarantine", Usage: "with --on-error quarantine: JSON Lines `FILE` receiving the rejected messages"},
			&cli.StringFlag{Name: "max-memory", Usage: "stop with an error once the pending state takes `SIZE` of memory, such as 4GiB or 512MiB (default: half the machine's memory; 0: no limit)"},
		},
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("demangle"),
		Action:          runDemangle,
	}
}

func runDemangle(c *cli.Context) (err error) {
	e := getEnv(c)
	if c.NArg() > 1 {
		return usageError("demangle takes at most one FILE, got %d", c.NArg())
	}
	policy, err := cdc.ParseErrorPolicy(c.String("on-error"))
	if err != nil {
		return usageError("--on-error: %v", err)
	}
	maxMemory := memlimit.Default()
	if c.IsSet("max-memory") {
		if maxMemory, err = memlimit.ParseSize(c.String("max-memory")); err != nil {
			return usageError("--max-memory: %v", err)
		}
	}
	q, err := openRejectSink(e, policy, c.String("quarantine"), c.Args().Slice())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := q.close(); err == nil {
			err = cerr
		}
	}()
	in, name, closeIn, err := openInput(e, c.Args().First())
	if err != nil {
		return err
	}
	defer closeIn()

	batches := make(chan *inputBatch, 4)
	stop := make(chan struct{})
	defer close(stop)
	d := &demangler{recv: demangle.New(c.Uint64("start")), policy: policy, q: q, spare: make(chan []cdc.Message, 8),
		prog: newInputProgress(e, c.Command.Name, []string{c.Args().First()}), store: &demangle.MemStore{},
		guard: memlimit.NewGuard(maxMemory)}
	d.recv.UseStore(d.store, 0)
	go readBatches(cdc.NewReader(in, e.inFormat, name), policy, batches, stop, &d.pool)

	outputs := make(chan []cdc.Message, 4)
	written := make(chan error, 1)
	go func() { written <- writeOutputs(cdc.NewWriter(e.stdout, e.outFormat), outputs, d.spare) }()
	runErr := d.run(batches, outputs)
	d.prog.finish()
	close(outputs)
	if err := <-written; err != nil && runErr == nil {
		runErr = withCode(exitFailure, fmt.Errorf("write output: %w", err))
	}
	d.report(e)
	return runErr
}

// writeOutputs encodes and writes the receiver's output on a goroutine of
// its own, so the receiver's goroutine only pushes. After a write error it
// drains the channel and returns the error.
func writeOutputs(w *cdc.Writer, outputs <-chan []cdc.Message, spare chan<- []cdc.Message) error {
	var err error
	for out := range outputs {
		for i := 0; i < len(out) && err == nil; i++ {
			err = w.Write(&out[i])
		}
		select { // not cleared, like input batches (see batchPool.put)
		case spare <- out[:0]: // back to the receiver's goroutine for reuse
		default:
		}
	}
	if err == nil {
		err = w.Flush()
	}
	return err
}

// demangler runs batches through an in-memory receiver.
type demangler struct {
	pool batchPool
	// spare holds written output slices for reuse: growing a fresh one for
	// every batch was an eighth of the receiver goroutine's time.
	spare  chan []cdc.Message
	recv   *demangle.Receiver
	store  *demangle.MemStore
	guard  *memlimit.Guard
	policy cdc.ErrorPolicy
	q      *rejectSink
	in     uint64
	out    uint64
	prog   *inputProgress // nil unless stderr is a terminal
}

// run pushes every batch and sends each batch's output on outputs. The
// output messages stay valid after later pushes (the receiver never
// reuses what it emitted), so they can be written concurrently.
func (d *demangler) run(batches <-chan *inputBatch, outputs chan<- []cdc.Message) error {
	for b := range batches {
		var out []cdc.Message
		select {
		case out = <-d.spare:
		default:
			out = make([]cdc.Message, 0, 2*batchSize)
		}
		for i := range b.msgs {
			var err error
			out, _, err = d.recv.Push(out, &b.msgs[i], b.pos[i])
			d.in++
			if err != nil && !errors.Is(err, demangle.ErrStore) {
				err = d.reject(&b.msgs[i], b.pos[i], err)
			}
			if err == nil {
				err = d.deferred()
			}
			if err != nil {
				outputs <- out
				return err
			}
		}
		if err := d.bound(); err != nil {
			outputs <- out
			return err
		}
		d.out += uint64(len(out))
		outputs <- out
		for i := range b.rejects {
			if err := d.q.add(&b.rejects[i]); err != nil {
				return err
			}
		}
		d.prog.batch(b.offset, len(b.msgs)+len(b.rejects), d.recv.Frontier)
		if b.err != nil {
			return withCode(exitFailure, b.err)
		}
		d.pool.put(b)
	}
	return nil
}

// reject applies the policy to a message the receiver refused (in part,
// for a statement some of whose claims it holds): under fail the error is
// returned, otherwise the message is counted and quarantined.
func (d *demangler) reject(m *cdc.Message, at cdc.Pos, err error) error {
	if d.policy == cdc.Fail {
		return err
	}
	rj := demangle.RejectOf(m, at, err)
	return d.q.add(&rj)
}

// deferred applies the policy to the violations found in messages taken
// back from beyond the receiver's horizon during the last push.
func (d *demangler) deferred() error {
	for _, v := range d.recv.Deferred() {
		if err := d.reject(&v.Msg, v.At, v); err != nil {
			return err
		}
	}
	return nil
}

// bound sheds what the receiver holds beyond its budget into the store,
// and stops the run once the heap has passed --max-memory.
func (d *demangler) bound() error {
	if d.recv.NeedShed() {
		if err := d.recv.Shed(); err != nil {
			return withCode(exitFailure, err)
		}
	}
	live, over := d.guard.Exceeded()
	if !over {
		return nil
	}
	times, updates := d.recv.PendingSize()
	f, _ := d.recv.Frontier()
	return withCode(exitFailure, fmt.Errorf("demangle: the pending state takes %s of memory, past --max-memory %s "+
		"(frontier %d; %d updates at %d times in memory, %d messages beyond): demangle holds it in memory; "+
		"'cdclog ingest --db PATH' keeps it on disk, or raise --max-memory",
		memlimit.FormatSize(live), memlimit.FormatSize(d.guard.Max()), f, updates, times, d.store.Len()))
}

func (d *demangler) report(e *env) {
	s := d.recv.Stats()
	times, updates := d.recv.PendingSize()
	attrs := []slog.Attr{slog.Uint64("messages", d.in), slog.Uint64("records_out", d.out),
		slog.Uint64("duplicates", s.Duplicates), slog.Uint64("stale", s.Stale), slog.Uint64("rejected", d.q.count),
		slog.Int("pending_times", times), slog.Int("pending_updates", updates)}
	if n := d.store.Len(); n > 0 {
		attrs = append(attrs, slog.Int64("pending_beyond_memory", n))
	}
	logSummary(e, "demangle finished", append(attrs, stuckAttrs(d.recv.Stuck())...)...)
}
