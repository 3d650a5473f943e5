package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// env is what every command needs from the global flags and the process:
// formats, streams and the logger. It is built once in the app's Before
// hook and stored in the app's metadata.
type env struct {
	inFormat  cdc.Format
	outFormat cdc.Format
	quiet     bool
	// stdoutStream is set by a command that writes its stream to stdout
	// (demangle, replay, merge, ingest without --out): no progress is drawn then
	// when stdout is the terminal too, where it would share lines with the
	// stream.
	stdoutStream bool
	stdin        io.Reader
	stdout       io.Writer
	stderr       io.Writer
	log          *slog.Logger
}

const envKey = "cdclog.env"

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "wire `FORMAT` of input and output: jsonl or msgpack"},
		&cli.StringFlag{Name: "in-format", Usage: "input `FORMAT` only, overriding --format: jsonl or msgpack"},
		&cli.StringFlag{Name: "out-format", Usage: "output `FORMAT` only, overriding --format: jsonl or msgpack"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress display and no informational logs"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "stderr log `LEVEL`: debug, info, warn or error"},
		&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version, commit and Go version, and exit"},
		&cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile to `FILE` (for performance work)"},
		&cli.StringFlag{Name: "memprofile", Hidden: true, Usage: "write an allocation profile to `FILE` at exit (for performance work)"},
		&cli.StringFlag{Name: "trace", Hidden: true, Usage: "write an execution trace to `FILE` (for performance work: go tool trace FILE)"},
	}
}

// setupGlobals parses the global flags into the env kept in the app metadata.
func setupGlobals(c *cli.Context) error {
	e := &env{stdin: c.App.Reader, stdout: c.App.Writer, stderr: c.App.ErrWriter, quiet: c.Bool("quiet")}
	base, err := cdc.ParseFormat(c.String("format"))
	if err != nil {
		return usageError("--format: %v", err)
	}
	e.inFormat, e.outFormat = base, base
	if s := c.String("in-format"); s != "" {
		if e.inFormat, err = cdc.ParseFormat(s); err != nil {
			return usageError("--in-format: %v", err)
		}
	}
	if s := c.String("out-format"); s != "" {
		if e.outFormat, err = cdc.ParseFormat(s); err != nil {
			return usageError("--out-format: %v", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return usageError("--log-level: %v", err)
	}
	if e.quiet && level < slog.LevelWarn {
		level = slog.LevelWarn
	}
	e.log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[envKey] = e
	return nil
}

// getEnv returns the env built by setupGlobals.
func getEnv(c *cli.Context) *env {
	if e, ok := c.App.Metadata[envKey].(*env); ok {
		return e
	}
	// Not reached through newApp (a test calling an action directly): defaults.
	return &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, log: slog.Default()}
}

// interactive reports whether progress may be drawn: stderr is a terminal,
// --quiet is off, and stdout is not a terminal receiving the stream.
func (e *env) interactive() bool {
	return !e.quiet && isTerminal(e.stderr) && !(e.stdoutStream && isTerminal(e.stdout))
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// exitError carries an exit code for run to return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Exit codes of SPEC section 5.
const (
	exitOK        = 0
	exitFailure   = 1
	exitUsage     = 2
	exitViolation = 3
)

// usageError is a mistake on the command line: exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// withCode attaches an exit code to err (nil stays nil).
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// errDone ends a run successfully before any command: --version has
// printed what was asked.
var errDone = errors.New("done")

// reportError prints err (if any) to stderr and returns the exit code. An
// option the library refused (cdc.ErrOption) is a usage error, whatever
// code an action attached to it.
func reportError(stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, errDone) {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	switch {
	case errors.Is(err, cdc.ErrOption):
		code = exitUsage
	case errors.As(err, &ee):
		code = ee.code
	case demangle.IsViolation(err):
		code = exitViolation
	}
	fmt.Fprintf(stderr, "cdclog: %v%s\n", err, formatHint(err))
	if code == exitUsage {
		fmt.Fprintln(stderr, "Run 'cdclog --help' or 'cdclog COMMAND --help' for usage.")
	}
	return code
}

// formatHint says how to read the input in the format it looks like, when
// err is about a message in the other format (msgpack read as JSON Lines,
// or the reverse).
func formatHint(err error) string {
	var de *cdc.DecodeError
	if !errors.As(err, &de) || !de.WrongFormat {
		return ""
	}
	f := de.LooksLike
	return fmt.Sprintf(" (to read %s, give --in-format %s, or --format %s for input and output)", f.Name(), f, f)
}
