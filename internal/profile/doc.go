// Package profile writes the performance profiles the cdclog binary takes
// on request (its hidden flags --cpuprofile, --trace and --memprofile): a
// CPU profile and an execution trace over the run, an allocation profile
// at its end.
package profile
