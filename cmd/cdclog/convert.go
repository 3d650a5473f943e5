package main

import (
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/clean"
	"github.com/urfave/cli/v2"
)

func convertCommand() *cli.Command {
	return &cli.Command{
		Name:        "convert",
		Usage:       "turn a naive stream (updates and finish messages) into a CDC stream",
		UsageText:   "cdclog convert [FILE]",
		Description: helpText("convert"),
		Action:      runConvert,
	}
}

func runConvert(c *cli.Context) error {
	if err := atMostOneFile(c, "convert"); err != nil {
		return err
	}
	e := getEnv(c)
	in, closeIn, err := cdc.OpenInput(c.Args().First(), e.stdin, e.inFormat)
	if err != nil {
		return err
	}
	defer closeIn()
	res, err := clean.Convert(in, cdc.NewWriter(e.stdout, e.outFormat))
	if res.Unfinished > 0 {
		e.log.Warn("input ended before a finish for every time it touched: updates written without progress",
			"updates", res.Unfinished, "from_time", res.UnfinishedFrom)
	}
	logSummary(e, "convert finished", res.LogAttrs()...)
	return withCode(exitFailure, err)
}
