package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:        "check",
		Usage:       "verify a database: bbolt's consistency check, every record's checksum, the cross-checks",
		UsageText:   "cdclog check --db PATH [--json] [--max-problems N] [--lock-timeout D]",
		Description: helpText("check"),
		Flags: append(dbFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object"},
			&cli.IntFlag{Name: "max-problems", Value: recovery.DefaultMaxProblems, Usage: "list at most `N` problems (the rest are counted)"},
		),
		Action: runCheck,
	}
}

func runCheck(c *cli.Context) error {
	e := getEnv(c)
	path, err := dbPath(c, "check")
	if err != nil {
		return err
	}
	if err := noArgs(c, "check"); err != nil {
		return err
	}
	o := recovery.CheckOptions{MaxProblems: c.Int("max-problems")}
	if o.MaxProblems == 0 { // the library's default, but not what the flag says:
		o.MaxProblems = -1 // refused as any count below 1
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if o.LockTimeout, err = lockTimeout(c); err != nil {
		return err
	}
	prog := newProgress(e, progress.Options{Label: "check " + path})
	rep, err := recovery.Check(path, o)
	prog.Finish()
	if errors.Is(err, recovery.ErrLocked) {
		return readsFileItself(err, "check", "'cdclog inspect'") // unlike inspect
	}
	if err != nil {
		return dbError(err)
	}
	err = writeStdout(e, func(w *bufio.Writer) error {
		return inspect.Check(w, &rep, inspect.Options{JSON: c.Bool("json")})
	})
	if err != nil || rep.OK {
		return err
	}
	return withCode(exitFailure, fmt.Errorf("check: %s: %s", path, inspect.ProblemCount(&rep)))
}
