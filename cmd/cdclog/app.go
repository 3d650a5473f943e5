package main

import (
	"io"

	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/urfave/cli/v2"
)

// newApp builds the command tree. Every command lives in its own file and
// is registered here.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                   "cdclog",
		Usage:                  "crash-safe processor for change-data-capture logs",
		UsageText:              "cdclog [global options] COMMAND [options] [ARGUMENTS...]",
		Description:            helpText("cdclog"),
		Flags:                  globalFlags(),
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		// Broker URLs hold commas (kafka://b1:9092,b2:9092/t): a repeated
		// flag (--from) gives one value each time, never split.
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError("%s", flagText(err))
		},
		Before: func(c *cli.Context) error {
			if c.Bool("version") {
				printVersion(c.App.Writer)
				return errDone
			}
			if err := setupGlobals(c); err != nil {
				return err
			}
			return startProfile(c)
		},
		After:    stopProfile,
		Commands: commands(),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownCommand(c.App.Commands, c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	// urfave adds --help to the app only when it adds its own help
	// command; cdclog has its own (helpCommand).
	app.Flags = append(app.Flags, cli.HelpFlag)
	setupCommands("", app.Commands)
	app.Setup()
	return app
}

// unknownCommand is the usage error for a mistyped command name, with the
// command it most likely meant.
func unknownCommand(cmds []*cli.Command, name string) error {
	return withCode(exitUsage, cliargs.UnknownCommand("cdclog", cmds, name))
}

// helpCommand is 'cdclog help [COMMAND [VIEW]]'. run turns "help COMMAND"
// into "COMMAND --help" before the command line is parsed, so that the
// help is the same either way; the action only runs for "help" alone.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:        "help",
		Usage:       "show the help of cdclog or of a command",
		UsageText:   "cdclog help [COMMAND [VIEW]]",
		Description: helpText("help"),
		Action:      cli.ShowAppHelp,
	}
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
		publishCommand(),
		serveCommand(),
		replayCommand(),
		inspectCommand(),
		mergeCommand(),
		gcCommand(),
		consumerCommand(),
		checkCommand(),
		versionCommand(),
		completionCommand(),
		helpCommand(),
	}
}
