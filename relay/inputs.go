package relay

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/input"
	"github.com/cdclog/cdclog/recovery"
)

// InputList is a list of input names parsed, as `cdclog ingest --from
// INPUT... FILE...` takes them: the files, read in turn, and the broker
// inputs, read concurrently after them.
type InputList struct {
	// Files are file paths, in the order given; "-" (or "") is stdin.
	Files []string
	// Brokers are the broker inputs, in the order given.
	Brokers []broker.Endpoint
}

// DuplicateInputError is ParseInputs' refusal of a broker input given
// twice: each input commits its own position, under its name.
type DuplicateInputError struct {
	// Name is the input's name (broker.Endpoint.Name).
	Name string
}

// Error names the input given twice.
func (e *DuplicateInputError) Error() string {
	return fmt.Sprintf("input %s is given twice (each input commits one position)", e.Name)
}

// ParseInputs sorts names into files and broker inputs: a name with "://"
// is a broker URL (broker.Parse), any other a file path, "-" being stdin.
// No names at all means stdin. It returns broker.Parse's error for the
// first URL that is not one, and a *DuplicateInputError for a broker input
// given twice (two URLs of one topic, whatever their servers, are one
// input).
func ParseInputs(names []string) (InputList, error) {
	var l InputList
	seen := map[string]bool{}
	for _, name := range names {
		if !strings.Contains(name, "://") {
			l.Files = append(l.Files, name)
			continue
		}
		ep, err := broker.Parse(name)
		if err != nil {
			return InputList{}, err
		}
		if seen[ep.Name()] {
			return InputList{}, &DuplicateInputError{Name: ep.Name()}
		}
		seen[ep.Name()] = true
		l.Brokers = append(l.Brokers, ep)
	}
	if len(l.Files) == 0 && len(l.Brokers) == 0 {
		l.Files = []string{"-"}
	}
	return l, nil
}

// InputOptions configure InputList.Open.
type InputOptions struct {
	// Stdin is what the file "-" reads.
	Stdin io.Reader
	// Follow keeps reading the list's one file as it grows (input.File),
	// an Endless input; it needs exactly one file, a regular one.
	Follow bool
	// Source configures the broker inputs; its Format and Logger are the
	// files' too.
	Source SourceOptions
}

// Inputs are a run's opened inputs, as Run reads them.
type Inputs struct {
	// InTurn are the files and stdin, in the order given.
	InTurn []recovery.Source
	// Endless are the broker inputs, or the followed file.
	Endless []recovery.Source
	// Names name the inputs for a progress display, InTurn's or the
	// followed file's first: the paths, "-" for stdin and for each broker
	// input (none has a size).
	Names []string
}

// Close closes every input.
func (in *Inputs) Close() {
	for _, src := range in.InTurn {
		src.Close()
	}
	for _, src := range in.Endless {
		src.Close()
	}
}

// Open opens every input of the list, files first (input.Open, stdin by
// input.NewStream), then the broker inputs (Source), before anything is
// read, so that a missing file or a broker's option it does not take
// fails before a database is touched (a followed file that does not exist
// yet is no error: it is waited for, see input.OpenFile); on an error what was opened is
// closed. Options that Validate refuses are its *cdc.OptionError, Follow
// without exactly one file, not stdin, is one too; a file's error is
// input.Open's, a broker input's Source's (it wraps ErrOption for an
// option the broker does not take).
func (l InputList) Open(o InputOptions) (*Inputs, error) {
	if err := l.Validate(o.Source); err != nil {
		return nil, err
	}
	switch {
	case o.Follow && len(l.Files) == 1 && isStdin(l.Files[0]):
		return nil, &cdc.OptionError{Option: "--follow", Reason: "reads one regular FILE, not stdin: stdin and pipes are read as they come without it, until their producer closes them"}
	case o.Follow && len(l.Files) != 1:
		return nil, &cdc.OptionError{Option: "--follow", Reason: fmt.Sprintf("reads one regular FILE: give exactly one, not %d", len(l.Files))}
	}
	// Clipped: the broker inputs' names are appended, and must not land in
	// the spare capacity of the caller's Files.
	in := &Inputs{Names: slices.Clip(l.Files)}
	var files []recovery.Source
	for _, name := range l.Files {
		src, err := openFile(name, o)
		if err != nil {
			in.InTurn = files
			in.Close()
			return nil, err
		}
		files = append(files, src)
	}
	if o.Follow {
		in.Endless = files
	} else {
		in.InTurn = files
	}
	for _, ep := range l.Brokers {
		src, err := Source(ep, o.Source)
		if err != nil {
			in.Close()
			return nil, err
		}
		in.Endless = append(in.Endless, src)
		in.Names = append(in.Names, "-")
	}
	return in, nil
}

// Validate reports broker source options that no input of the list
// takes, as a *cdc.OptionError: AllowGap, CommitGroup or PartitionCheck
// without a broker input, CommitGroup or PartitionCheck without a Kafka
// input. (A broker input that does not take an option is Source's
// refusal.)
func (l InputList) Validate(o SourceOptions) error {
	kafkaIn := false
	for _, ep := range l.Brokers {
		kafkaIn = kafkaIn || ep.Kind == broker.Kafka
	}
	options := []struct {
		name             string
		given, kafkaOnly bool
	}{
		{"--allow-gap", o.AllowGap, false},
		{"--commit-group", o.CommitGroup != "", true},
		{"--partition-check", o.PartitionCheck != 0, true},
	}
	for _, f := range options {
		if f.given && len(l.Brokers) == 0 {
			return &cdc.OptionError{Option: f.name, Reason: "applies to broker inputs (--from kafka://... or nats://...), and there is none"}
		}
	}
	for _, f := range options {
		if f.given && f.kafkaOnly && !kafkaIn {
			return &cdc.OptionError{Option: f.name, Reason: "applies to Kafka inputs, and there is none"}
		}
	}
	return nil
}

func isStdin(name string) bool { return name == "-" || name == "" }

// openFile opens a named file input, or stdin.
func openFile(name string, o InputOptions) (recovery.Source, error) {
	if isStdin(name) {
		return input.NewStream(io.NopCloser(o.Stdin), o.Source.Format, "stdin", o.Source.Logger), nil
	}
	return input.Open(name, input.FileOptions{Format: o.Source.Format, Follow: o.Follow, Logger: o.Source.Logger})
}
