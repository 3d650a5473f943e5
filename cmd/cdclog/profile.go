package main

import (
	"github.com/cdclog/cdclog/internal/profile"
	"github.com/urfave/cli/v2"
)

const profileKey = "cdclog.profile"

// startProfile starts the CPU profile and the execution trace asked for by
// the hidden global flags --cpuprofile and --trace, keeping the session in
// the app metadata.
func startProfile(c *cli.Context) error {
	s, err := profile.Start(c.String("cpuprofile"), c.String("trace"))
	if err != nil {
		return withCode(exitFailure, err)
	}
	c.App.Metadata[profileKey] = s
	return nil
}

// stopProfile ends the CPU profile and the trace, if they were started,
// and writes the allocation profile asked for by --memprofile.
func stopProfile(c *cli.Context) error {
	s, _ := c.App.Metadata[profileKey].(*profile.Session)
	return s.Stop(c.String("memprofile"))
}
