package main

import (
	"fmt"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/urfave/cli/v2"
)

func demangleCommand() *cli.Command {
	return &cli.Command{
		Name:      "demangle",
		Usage:     "in-memory receiver: mangled CDC stream in, clean CDC stream out",
		UsageText: "cdclog demangle [--start T] [--on-error fail|skip|quarantine] [--quarantine FILE] [FILE]",
		Description: `Reads a CDC stream that may be duplicated and reordered (FILE, or stdin when
FILE is absent or "-") and writes the clean stream to stdout: each time's
updates once, in canonical order, released only when that time and every
earlier one are complete, each release followed by one progress statement.
Nothing is stored: use 'cdclog ingest' for a crash-safe run.

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
		prog: newInputProgress(e, c.Command.Name, []string{c.Args().First()})}
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
			if err != nil {
				if d.policy == cdc.Fail {
					outputs <- out
					return err
				}
				rj := demangle.RejectOf(&b.msgs[i], b.pos[i], err)
				if err := d.q.add(&rj); err != nil {
					outputs <- out
					return err
				}
			}
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

func (d *demangler) report(e *env) {
	s := d.recv.Stats()
	times, updates := d.recv.PendingSize()
	attrs := []slog.Attr{slog.Uint64("messages", d.in), slog.Uint64("records_out", d.out),
		slog.Uint64("duplicates", s.Duplicates), slog.Uint64("stale", s.Stale), slog.Uint64("rejected", d.q.count),
		slog.Int("pending_times", times), slog.Int("pending_updates", updates)}
	logSummary(e, "demangle finished", append(attrs, stuckAttrs(d.recv.Stuck())...)...)
}
