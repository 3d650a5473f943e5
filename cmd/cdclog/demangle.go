package main

import (
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/clean"
	"github.com/cdclog/cdclog/internal/memlimit"
	"github.com/urfave/cli/v2"
)

func demangleCommand() *cli.Command {
	return &cli.Command{
		Name:        "demangle",
		Usage:       "in-memory receiver: mangled CDC stream in, clean CDC stream out",
		UsageText:   "cdclog demangle [--start T] [--on-error fail|skip|quarantine] [--quarantine FILE] [--max-memory SIZE] [FILE]",
		Description: helpText("demangle"),
		Flags:       demangleFlags(),
		Action:      runDemangle,
	}
}

// demangleFlags are demangle's flags, which 'replay FILE' shares.
func demangleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T`: times below it count as complete and already emitted"},
		onErrorFlag(),
		&cli.StringFlag{Name: "quarantine", Usage: "with --on-error quarantine: JSON Lines `FILE` receiving the rejected messages"},
		&cli.StringFlag{Name: "max-memory", Usage: "stop with an error once the pending state takes `SIZE` of memory, such as 4GiB or 512MiB (default: half the machine's memory; 0: no limit)"},
	}
}

func runDemangle(c *cli.Context) (err error) {
	e := getEnv(c)
	if err := atMostOneFile(c, "demangle"); err != nil {
		return err
	}
	policy, err := onErrorPolicy(c)
	if err != nil {
		return err
	}
	maxMemory := memlimit.Default()
	if c.IsSet("max-memory") {
		if maxMemory, err = memlimit.ParseSize(c.String("max-memory")); err != nil {
			return usageError("--max-memory: %v", err)
		}
	}
	o := clean.Options{Start: c.Uint64("start"), OnError: policy, Log: e.log, MaxMemory: maxMemory}
	q := &rejectSink{name: c.String("quarantine")}
	if q.name != "" {
		o.Quarantine = q
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if err := q.open(e, c.Args().Slice()); err != nil {
		return err
	}
	defer func() {
		if cerr := q.close(); err == nil {
			err = cerr
		}
	}()
	in, closeIn, err := cdc.OpenInput(c.Args().First(), e.stdin, e.inFormat)
	if err != nil {
		return err
	}
	defer closeIn()

	memlimit.SetSoftLimit(maxMemory)
	e.stdoutStream = true
	prog := newInputProgress(e, c.Command.Name, []string{c.Args().First()})
	if prog != nil {
		o.Progress = func(p clean.Progress) {
			prog.Batch(p.Offset, p.Messages, func() (uint64, bool) { return p.Frontier, p.Done })
		}
	}
	res, runErr := clean.Stream(c.Context, in, cdc.NewWriter(e.stdout, e.outFormat), o)
	prog.Finish()
	reportDemangle(e, c.Command.Name, &res)
	return demangleError(c.Command.Name, runErr)
}

// demangleError names the command (demangle, or replay FILE, which runs
// the same code) in clean.Stream's error past --max-memory (its text says
// what to do); every error is a runtime failure (exit code 1) but a
// violation's (3, see reportError).
func demangleError(cmd string, err error) error {
	var me *clean.MemoryError
	if errors.As(err, &me) {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return err
}

// reportDemangle logs the one summary line of cmd: "demangle finished",
// or "replay finished" for 'replay FILE'.
func reportDemangle(e *env, cmd string, res *clean.Result) {
	logSummary(e, cmd+" finished", res.LogAttrs()...)
}
