package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/urfave/cli/v2"
)

const profileKey = "cdclog.profile"

// startProfile starts the CPU profile asked for by the hidden global flag
// --cpuprofile.
func startProfile(c *cli.Context) error {
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("cpu profile: %w", err))
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return withCode(exitFailure, fmt.Errorf("cpu profile: %w", err))
	}
	c.App.Metadata[profileKey] = f
	return nil
}

// stopProfile ends the CPU profile, if one was started.
func stopProfile(c *cli.Context) error {
	if f, ok := c.App.Metadata[profileKey].(*os.File); ok {
		pprof.StopCPUProfile()
		return f.Close()
	}
	return nil
}
