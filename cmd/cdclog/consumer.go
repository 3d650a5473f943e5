package main

import (
	"fmt"

	"github.com/cdclog/cdclog/control"
	"github.com/urfave/cli/v2"
)

func consumerCommand() *cli.Command {
	return &cli.Command{
		Name:      "consumer",
		Usage:     "manage the consumers registered in a database",
		UsageText: "cdclog consumer delete --db PATH [--lock-timeout D] NAME",
		Description: `A consumer is a named reader of the clean output registered through the
embedded API (recovery.Processor.Consumer); 'cdclog inspect consumers' lists
them with their lag. gc's retention never drops an output record a registered
consumer has not committed, so a consumer that is gone for good holds the
output log back: delete it.

Subcommands:
   delete NAME   remove the consumer's position; gc's retention no longer
                 waits for it, and a consumer of that name opened later
                 starts anew at the first record the output log holds

Like gc, it needs the database to itself: while another process holds it, it
says so after --lock-timeout. A name the database does not have is an error
(exit 1) that lists the names it has.

Examples:
   cdclog inspect --db state.db consumers
   cdclog consumer delete --db state.db billing`,
		Subcommands:     []*cli.Command{consumerDeleteCommand()},
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("consumer"),
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
		Name:            "delete",
		Usage:           "remove a consumer, so that gc's retention no longer waits for it",
		UsageText:       "cdclog consumer delete --db PATH [--lock-timeout D] NAME",
		Flags:           dbFlags(),
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("consumer delete"),
		Action:          runConsumerDelete,
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
