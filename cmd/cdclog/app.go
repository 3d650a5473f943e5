package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

// newApp builds the command tree. Every command lives in its own file and
// is registered here.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "cdclog",
		Usage: "crash-safe processor for change-data-capture logs",
		Description: `cdclog takes a CDC stream that may be duplicated and reordered, persists every
message to a bbolt write-ahead log, and emits a clean stream: deduplicated, in
time order, each time released only when complete, exactly once even across
kill -9.

Try it:
   cdclog gen --times 1000 | cdclog mangle | cdclog demangle
   cdclog gen | cdclog mangle > in.jsonl && cdclog ingest --db state.db --out clean.jsonl in.jsonl
   cdclog inspect --db state.db status

Exit codes: 0 success, 1 runtime failure, 2 usage error, 3 protocol violation.`,
		Flags:                  globalFlags(),
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError("%v", err)
		},
		Before: func(c *cli.Context) error {
			if err := setupGlobals(c); err != nil {
				return err
			}
			return startProfile(c)
		},
		After:    stopProfile,
		Commands: commands(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	return app
}

// commands lists every subcommand in the order of SPEC section 5; each is
// defined in its own file.
func commands() []*cli.Command {
	return []*cli.Command{
		genCommand(),
		mangleCommand(),
		convertCommand(),
		demangleCommand(),
		ingestCommand(),
		replayCommand(),
		inspectCommand(),
		mergeCommand(),
		gcCommand(),
		checkCommand(),
	}
}
