package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/ordering"
	"github.com/urfave/cli/v2"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge shards' JSON Lines records into one total order",
		UsageText: "cdclog merge [--on-error fail|skip|quarantine] [--quarantine FILE] FILE...",
		Description: `Reads one JSON Lines file per shard ("-" is stdin) and writes every record,
unchanged and exactly once, to stdout in total order: by meta.created_at
(epoch seconds, integer or fractional, or an RFC 3339 date-time), then by
meta.sequence_number (a decimal integer of any length, compared as a number),
then by arrival. A record without meta.created_at or meta.sequence_number
takes dynamodb.ApproximateCreationDateTime or dynamodb.SequenceNumber instead,
as DynamoDB stream records carry them.

A record is written only when every shard still being read has a record
waiting, so the order holds across the whole files while memory stays at one
record per shard. Each shard's own order is always kept: a record whose key
is below its predecessor's in the same file is reported as out of order and
written after that predecessor.

A line without a usable key (not a JSON object, a field missing or malformed,
longer than 16 MiB) is an error naming file and line. With --on-error fail (the
default) the command stops there with exit code 1: records already written
stay, nothing more is written. skip reports each such line on stderr and goes
on; quarantine writes each to the --quarantine file as JSON Lines
{"source","line","reason","raw"} ("raw_base64" instead of "raw" when the line
is not UTF-8; "truncated" when only the first KiB of an over-long line is kept).

Exit codes: 0 success, 1 bad line (under fail), missing file or write error,
2 usage error.

Examples:
   cdclog merge shard-a.jsonl shard-b.jsonl > merged.jsonl
   cdclog merge --on-error quarantine --quarantine rejected.jsonl shards/*.jsonl > merged.jsonl`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "on-error", Value: "fail", Usage: "`POLICY` for a line without a usable key: fail, skip or quarantine"},
			&cli.StringFlag{Name: "quarantine", Usage: "with --on-error quarantine: JSON Lines `FILE` that receives rejected lines"},
		},
		HideHelpCommand: true,
		// A bad flag is a usage error (exit 2); the app-level hook does not
		// reach subcommands.
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError("merge: %v", err)
		},
		Action: runMerge,
	}
}

// mergeOptions is the merge command line, checked.
type mergeOptions struct {
	policy     cdc.ErrorPolicy
	quarantine string
	files      []string
}

func parseMergeOptions(c *cli.Context) (mergeOptions, error) {
	var o mergeOptions
	var err error
	if o.policy, err = cdc.ParseErrorPolicy(c.String("on-error")); err != nil {
		return o, usageError("--on-error: %v", err)
	}
	o.quarantine = c.String("quarantine")
	switch {
	case o.policy == cdc.Quarantine && o.quarantine == "":
		return o, usageError("--on-error quarantine needs --quarantine FILE: merge has no database to keep rejected lines in")
	case o.policy != cdc.Quarantine && o.quarantine != "":
		return o, usageError("--quarantine is only used with --on-error quarantine")
	}
	if e := getEnv(c); e.inFormat != cdc.JSONL || e.outFormat != cdc.JSONL {
		return o, usageError("merge reads and writes JSON Lines only")
	}
	o.files = c.Args().Slice()
	if len(o.files) == 0 {
		return o, usageError("merge needs at least one FILE (one per shard)")
	}
	stdin := 0
	for _, f := range o.files {
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return o, usageError(`"-" (stdin) can be only one of the shards`)
	}
	return o, nil
}

func runMerge(c *cli.Context) error {
	opts, err := parseMergeOptions(c)
	if err != nil {
		return err
	}
	e := getEnv(c)
	shards, closeAll, err := openShards(opts.files, e.stdin)
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer closeAll()
	m := &merger{env: e, shards: shards, out: bufio.NewWriterSize(e.stdout, 256<<10), start: time.Now()}
	if m.rejects, err = openRejectSink(e, opts.policy, opts.quarantine, opts.files); err != nil {
		return err
	}
	if opts.policy != cdc.Fail {
		for _, s := range shards {
			s.reject = m.reject
		}
	}
	return withCode(exitFailure, m.run())
}

// shardFile is one input file read as a shard; it applies --on-error to the
// lines its reader rejects.
type shardFile struct {
	name       string
	r          *ordering.JSONLReader
	reject     func(*ordering.LineError) error // nil: fail on the first bad line
	disordered int
}

// Next implements ordering.Source.
func (s *shardFile) Next() (ordering.Key, []byte, error) {
	for {
		k, rec, err := s.r.Next()
		var le *ordering.LineError
		if s.reject == nil || !errors.As(err, &le) {
			return k, rec, err
		}
		if err := s.reject(le); err != nil {
			return k, nil, err
		}
	}
}

// openShards opens every file before anything is written, so a missing
// file fails the command cleanly.
func openShards(names []string, stdin io.Reader) ([]*shardFile, func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	shards := make([]*shardFile, 0, len(names))
	for _, name := range names {
		var r io.Reader = stdin
		if name == "-" {
			name = "<stdin>"
		} else {
			f, err := openFile(name)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			files = append(files, f)
			r = f
		}
		shards = append(shards, &shardFile{name: name, r: ordering.NewJSONLReader(r, name)})
	}
	return shards, closeAll, nil
}

// openFile opens an input file, refusing a directory up front rather than
// at its first read.
func openFile(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a shard file", name)
	}
	return f, nil
}

// merger holds one run of the merge command: its output, counters and the
// optional quarantine file.
type merger struct {
	env      *env
	shards   []*shardFile
	out      *bufio.Writer
	rejects  *rejectSink
	start    time.Time
	lastDraw time.Time

	written, skipped, quarantined, disordered int64
}

// maxDisorderReports is how many out-of-order records per shard are
// reported one by one; further ones are only counted.
const maxDisorderReports = 10

func (m *merger) run() error {
	sources := make([]ordering.Source[[]byte], len(m.shards))
	for i, s := range m.shards {
		sources[i] = s
	}
	err := ordering.Merge(sources, m.emit, m.onDisorder)
	if ferr := m.out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	if qerr := m.rejects.close(); err == nil {
		err = qerr
	}
	m.clearProgress()
	m.summarize(err)
	return err
}

func (m *merger) emit(_ int, it ordering.Item[[]byte]) error {
	m.out.Write(it.Record)
	if err := m.out.WriteByte('\n'); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	m.written++
	if m.written%4096 == 0 {
		m.drawProgress()
	}
	return nil
}

func (m *merger) onDisorder(i int, key ordering.Key) {
	m.disordered++
	s := m.shards[i]
	s.disordered++
	if s.disordered <= maxDisorderReports {
		m.env.log.Warn("out-of-order record, kept in its shard's order",
			"at", fmt.Sprintf("%s:%d", s.name, s.r.Line()), "key", key.String())
	}
	if s.disordered == maxDisorderReports {
		m.env.log.Warn("further out-of-order records of this shard are only counted", "shard", s.name)
	}
}

// reject applies --on-error skip or quarantine to one bad line.
func (m *merger) reject(le *ordering.LineError) error {
	rj := cdc.Reject{Pos: cdc.Pos{Source: le.Source, Line: le.Line}, Raw: le.Raw,
		Truncated: errors.Is(le, ordering.ErrLineTooLong), Reason: le.Err.Error()}
	if err := m.rejects.add(&rj); err != nil {
		return err
	}
	if m.rejects.w == nil {
		m.skipped++
	} else {
		m.quarantined++
	}
	return nil
}

func (m *merger) summarize(err error) {
	args := []any{"shards", len(m.shards), "records", m.written,
		"elapsed", time.Since(m.start).Round(time.Millisecond)}
	if m.skipped > 0 {
		args = append(args, "skipped", m.skipped)
	}
	if m.quarantined > 0 {
		args = append(args, "quarantined", m.quarantined, "quarantine", m.rejects.name)
	}
	if m.disordered > 0 {
		args = append(args, "out_of_order", m.disordered)
	}
	switch {
	case err != nil:
		m.env.log.Info("merge stopped", args...)
	case m.skipped+m.quarantined+m.disordered > 0:
		m.env.log.Warn("merge done", args...)
	default:
		m.env.log.Info("merge done", args...)
	}
}

// drawProgress shows the record count and rate on a terminal, at most
// once a second.
func (m *merger) drawProgress() {
	if !m.env.interactive() || time.Since(m.lastDraw) < time.Second {
		return
	}
	m.lastDraw = time.Now()
	rate := float64(m.written) / time.Since(m.start).Seconds()
	fmt.Fprintf(m.env.stderr, "\rmerged %d records (%.0f/s)  ", m.written, rate)
}

func (m *merger) clearProgress() {
	if !m.lastDraw.IsZero() {
		fmt.Fprint(m.env.stderr, "\r\033[K")
	}
}
