package main

import (
	"fmt"
	"iter"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/urfave/cli/v2"
)

// defaultGenTimes is gen's --times: enough for a demonstration, finite so
// that a plain `cdclog gen` ends.
const defaultGenTimes = 100

func genCommand() *cli.Command {
	return &cli.Command{
		Name:        "gen",
		Usage:       "write a deterministic example stream to stdout",
		UsageText:   "cdclog gen [--kind cdc|naive] [--seed N] [--times N] [--keys N] [--start T] [--shape mixed|simple] [--open]",
		Description: helpText("gen"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Value: streamgen.CDC.String(), Usage: "`KIND` of stream: cdc or naive"},
			&cli.Int64Flag{Name: "seed", Usage: "`N` selects the stream"},
			&cli.Uint64Flag{Name: "times", Value: defaultGenTimes, Usage: "how many consecutive times, `N`; 0 means forever"},
			&cli.Uint64Flag{Name: "start", Usage: "first time `T`"},
			&cli.IntFlag{Name: "keys", Value: streamgen.DefaultKeys, Usage: "number of distinct data values, `N`"},
			&cli.StringFlag{Name: "shape", Value: streamgen.Mixed.String(), Usage: "`SHAPE` of the progress (or finish) messages: mixed or simple"},
			&cli.BoolFlag{Name: "open", Usage: "leave the stream open: no final statement that nothing follows the last time"},
		},
		Action: runGen,
	}
}

func runGen(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError("gen takes no arguments, got %q", c.Args().First())
	}
	opts, err := genOptions(c)
	if err != nil {
		return err
	}
	e := getEnv(c)
	n, err := writeStream(e, streamgen.Gen(opts))
	e.log.Debug("gen finished", "messages", n)
	return err
}

// genOptions reads and checks gen's flags.
func genOptions(c *cli.Context) (streamgen.GenOptions, error) {
	o := streamgen.GenOptions{
		Seed:  c.Int64("seed"),
		Times: c.Uint64("times"),
		Start: c.Uint64("start"),
		Keys:  c.Int("keys"),
		Final: !c.Bool("open"),
	}
	var err error
	if o.Kind, err = streamgen.ParseKind(c.String("kind")); err != nil {
		return o, usageError("gen: --kind: %v", err)
	}
	if o.Shape, err = streamgen.ParseShape(c.String("shape")); err != nil {
		return o, usageError("gen: --shape: %v", err)
	}
	if o.Keys == 0 { // the library's default, but not what the flag says
		return o, fmt.Errorf("gen: %w", streamgen.KeysError(o.Keys))
	}
	if err := o.Validate(); err != nil {
		return o, fmt.Errorf("gen: %w", err)
	}
	return o, nil
}

// writeStream writes every message of seq to stdout in the output format
// (cdc.Writer.WriteAll) and returns how many it wrote.
func writeStream(e *env, seq iter.Seq[cdc.Message]) (uint64, error) {
	w := cdc.NewWriter(e.stdout, e.outFormat)
	n, err := w.WriteAll(seq)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return n, withCode(exitFailure, fmt.Errorf("write output: %w", err))
	}
	return n, nil
}
