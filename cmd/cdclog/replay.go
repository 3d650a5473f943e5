package main

import (
	"fmt"
	"strconv"

	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func replayCommand() *cli.Command {
	flags := append(dbFlags(),
		&cli.Uint64Flag{Name: "from-seq", Value: 1, Usage: "with --db: start at output sequence number `N` (the first record is 1)"},
		&cli.BoolFlag{Name: "rederive", Usage: "with --db: recompute the clean stream from the WAL alone, with a fresh receiver"},
		&cli.BoolFlag{Name: "verify", Usage: "with --db: re-derive and compare with the stored output; print a summary, exit 1 if they differ"},
	)
	// replay FILE is demangle FILE: same flags, same code.
	flags = append(flags, demangleFlags()...)
	return &cli.Command{
		Name:  "replay",
		Usage: "offline replay: a database's stored output (or re-derived from its WAL), or a captured input file",
		UsageText: `cdclog replay --db PATH [--from-seq N] [--lock-timeout D]
cdclog replay --db PATH --rederive | --verify
cdclog replay [--start T] [--on-error fail|skip|quarantine] [--quarantine FILE] [--max-memory SIZE] FILE`,
		Description: helpText("replay"),
		Flags:       flags,
		Action:      runReplay,
	}
}

func runReplay(c *cli.Context) error {
	if !c.IsSet("db") {
		return replayFile(c)
	}
	if c.NArg() > 0 {
		return usageError("replay takes --db PATH or a FILE, not both")
	}
	// --max-memory bounds the in-memory receiver of 'replay FILE'; the
	// --db modes do not read it, so it is refused rather than ignored.
	if name := firstSet(c, "start", "on-error", "quarantine", "max-memory"); name != "" {
		return usageError("replay: --%s applies to 'replay FILE', not to --db", name)
	}
	if c.Bool("rederive") && c.Bool("verify") {
		return usageError("replay: give --rederive (write the re-derived stream) or --verify (compare it with the stored output), not both")
	}
	if c.IsSet("from-seq") && (c.Bool("rederive") || c.Bool("verify")) {
		return usageError("replay: --from-seq applies to the stored output, not to --rederive or --verify")
	}
	e := getEnv(c)
	if !c.Bool("verify") && !c.Bool("rederive") {
		// The stored output can be read from a running processor too.
		from := max(c.Uint64("from-seq"), 1)
		return readDB(c, "replay", func(r control.View) error {
			if err := checkRetained(c, r, from); err != nil {
				return err
			}
			return replayStored(e, r, from)
		})
	}
	what := "replay --rederive"
	if c.Bool("verify") {
		what = "replay --verify"
	}
	r, err := openReader(c, what)
	if err != nil {
		return err
	}
	defer r.Close()
	if c.Bool("verify") {
		return replayVerify(e, r)
	}
	return replayRederive(e, r)
}

// checkRetained refuses a replay from a record gc's retention dropped,
// saying where the output log starts.
func checkRetained(c *cli.Context, r control.View, from uint64) error {
	first := r.OutputStart()
	if from >= first {
		return nil
	}
	hint := "start at " + u64(first) + " or later"
	if !c.IsSet("from-seq") {
		hint = "give --from-seq " + u64(first) + " for what is kept"
	}
	return withCode(exitFailure, fmt.Errorf("replay: gc's retention dropped the output records before %d (the output log holds records %d to %d): %s",
		first, first, r.OutputEnd()-1, hint))
}

// replayFile is 'replay FILE': demangle's code on a captured input.
func replayFile(c *cli.Context) error {
	if name := firstSet(c, "from-seq", "rederive", "verify", "lock-timeout"); name != "" {
		return usageError("replay: --%s needs --db PATH", name)
	}
	if c.NArg() != 1 {
		return usageError("replay needs --db PATH or one FILE (\"-\" for stdin), got %d arguments", c.NArg())
	}
	return runDemangle(c)
}

// replayStored writes the committed output records from seq from on.
func replayStored(e *env, r control.View, from uint64) error {
	o, done := streamOptions(e, "replay")
	defer done()
	return withCode(exitFailure, inspect.Replay(e.stdout, r, from, o))
}

// replayRederive writes the clean stream re-derived from the WAL.
func replayRederive(e *env, r *recovery.Reader) error {
	o, done := streamOptions(e, "rederive")
	defer done()
	return withCode(exitFailure, inspect.Rederive(e.stdout, r, o))
}

// replayVerify compares the re-derived stream with the stored output.
func replayVerify(e *env, r *recovery.Reader) error {
	prog := newProgress(e, progress.Options{Label: "verify"}) // a spinner: Verify reports no progress
	res, err := inspect.VerifyStored(e.stdout, r)
	prog.Finish()
	if err != nil {
		return withCode(exitFailure, err)
	}
	if !res.Match {
		return withCode(exitFailure, fmt.Errorf("replay --verify: the stored output differs from the stream re-derived from the WAL at record %d", res.FirstDiff))
	}
	return nil
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }
