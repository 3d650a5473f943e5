package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/urfave/cli/v2"
)

const (
	profileKey = "cdclog.profile"
	traceKey   = "cdclog.trace"
)

// startProfile starts the CPU profile and the execution trace asked for by
// the hidden global flags --cpuprofile and --trace.
func startProfile(c *cli.Context) error {
	if err := startToFile(c, "cpuprofile", profileKey, "cpu profile", pprof.StartCPUProfile); err != nil {
		return err
	}
	return startToFile(c, "trace", traceKey, "trace", trace.Start)
}

// startToFile creates the file named by flag, if it is set, starts start
// writing to it, and keeps the file in the app metadata under key.
func startToFile(c *cli.Context, flag, key, what string, start func(io.Writer) error) error {
	path := c.String(flag)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("%s: %w", what, err))
	}
	if err := start(f); err != nil {
		f.Close()
		return withCode(exitFailure, fmt.Errorf("%s: %w", what, err))
	}
	c.App.Metadata[key] = f
	return nil
}

// stopProfile ends the CPU profile and the trace, if they were started,
// and writes the allocation profile asked for by --memprofile.
func stopProfile(c *cli.Context) error {
	var errs []error
	if path := c.String("memprofile"); path != "" {
		errs = append(errs, writeHeapProfile(path))
	}
	if f, ok := c.App.Metadata[profileKey].(*os.File); ok {
		pprof.StopCPUProfile()
		errs = append(errs, f.Close())
	}
	if f, ok := c.App.Metadata[traceKey].(*os.File); ok {
		trace.Stop()
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memory profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("memory profile: %w", err)
	}
	return f.Close()
}
