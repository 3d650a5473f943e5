package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// A Session is the profiling of one run, from Start to Stop. A nil
// *Session profiles nothing; its Stop still writes an allocation profile.
type Session struct {
	cpu, trace *os.File
}

// Start starts a CPU profile written to cpuPath and an execution trace
// written to tracePath, each unless its path is "". On an error nothing
// is left running.
func Start(cpuPath, tracePath string) (*Session, error) {
	s := &Session{}
	var err error
	if s.cpu, err = startToFile(cpuPath, "cpu profile", pprof.StartCPUProfile); err != nil {
		return nil, err
	}
	if s.trace, err = startToFile(tracePath, "trace", trace.Start); err != nil {
		s.Stop("")
		return nil, err
	}
	return s, nil
}

// startToFile creates the file at path, unless path is "", and starts
// start writing to it; what names the profile in errors.
func startToFile(path, what string, start func(io.Writer) error) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return f, nil
}

// Stop writes the allocation profile to memPath (unless it is ""), then
// ends the CPU profile and the trace, if they were started, and closes
// their files.
func (s *Session) Stop(memPath string) error {
	var errs []error
	if memPath != "" {
		errs = append(errs, writeHeapProfile(memPath))
	}
	if s == nil {
		return errors.Join(errs...)
	}
	if s.cpu != nil {
		pprof.StopCPUProfile()
		errs = append(errs, s.cpu.Close())
		s.cpu = nil
	}
	if s.trace != nil {
		trace.Stop()
		errs = append(errs, s.trace.Close())
		s.trace = nil
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
