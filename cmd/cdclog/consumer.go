package main

import (
	"fmt"

	"github.com/cdclog/cdclog/control"
	"github.com/urfave/cli/v2"
)

func consumerCommand() *cli.Command {
	return &cli.Command{
		Name:        "consumer",
		Usage:       "manage the consumers registered in a database",
		UsageText:   "cdclog consumer delete --db PATH [--lock-timeout D] NAME",
		Description: helpText("consumer"),
		Subcommands: []*cli.Command{consumerDeleteCommand()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageError("consumer needs a subcommand: delete")
			}
			return usageError("consumer: unknown subcommand %q (want delete)", c.Args().First())
		},
	}
}

func consumerDeleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "remove a consumer, so that gc's retention no longer waits for it",
		UsageText: "cdclog consumer delete --db PATH [--lock-timeout D] NAME",
		Flags:     dbFlags(),
		Action:    runConsumerDelete,
	}
}

func runConsumerDelete(c *cli.Context) error {
	path, err := dbPath(c, "consumer delete")
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usageError("consumer delete needs one consumer NAME, got %d arguments", c.NArg())
	}
	timeout, err := lockTimeout(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	held, err := control.DeleteConsumer(c.Context, path, name, timeout)
	if held != nil {
		getEnv(c).log.Info("the database is held by a running cdclog: it deleted the consumer", "pid", held.Info.PID)
	}
	if err != nil {
		return dbError(err)
	}
	_, err = fmt.Fprintf(getEnv(c).stdout, "deleted consumer %q\n", name)
	return withCode(exitFailure, err)
}
