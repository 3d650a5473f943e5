package main

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/urfave/cli/v2"
)

func mangleCommand() *cli.Command {
	return &cli.Command{
		Name:        "mangle",
		Usage:       "duplicate and reorder a stream, deterministically by seed",
		UsageText:   "cdclog mangle [--seed N] [--max-delay N] [--max-copies N] [FILE]",
		Description: helpText("mangle"),
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "seed", Usage: "`N` selects the duplication and reordering"},
			&cli.IntFlag{Name: "max-delay", Value: streamgen.DefaultMaxDelay, Usage: "largest number of messages, `N`, a copy is held back by; 0 keeps the order"},
			&cli.IntFlag{Name: "max-copies", Value: streamgen.DefaultMaxCopies, Usage: "largest number of copies, `N`, of one message; 1 adds no duplicates"},
		},
		Action: runMangle,
	}
}

func runMangle(c *cli.Context) error {
	if err := atMostOneFile(c, "mangle"); err != nil {
		return err
	}
	opts := streamgen.MangleOptions{Seed: c.Int64("seed"), MaxDelay: c.Int("max-delay"), MaxCopies: c.Int("max-copies")}
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("mangle: %w", err)
	}
	if opts.MaxCopies == 0 { // the library's default, but not what the flag says
		return fmt.Errorf("mangle: %w", streamgen.CopiesError(opts.MaxCopies))
	}
	e := getEnv(c)
	in, closeIn, err := cdc.OpenInput(c.Args().First(), e.stdin, e.inFormat)
	if err != nil {
		return err
	}
	defer closeIn()
	var readErr error
	n, err := writeStream(e, streamgen.Mangle(in.Messages(&readErr), opts))
	e.log.Debug("mangle finished", "messages_out", n)
	if readErr != nil {
		return withCode(exitFailure, readErr)
	}
	return err
}
