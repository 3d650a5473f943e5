package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

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
			continue
		}
		if strings.HasPrefix(f, "-") {
			if _, err := os.Stat(f); err != nil {
				return o, usageError("%s after the files: flags go before FILE...", f)
			}
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
	if opts.policy == cdc.Quarantine {
		if err := checkNotAnInput(opts.quarantine, opts.files); err != nil {
			return err
		}
		if m.quarantine, err = newQuarantineFile(opts.quarantine); err != nil {
			return withCode(exitFailure, err)
		}
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

// checkNotAnInput refuses a quarantine file that is one of the inputs:
// creating it would truncate that input.
func checkNotAnInput(quarantine string, inputs []string) error {
	q, err := os.Stat(quarantine)
	if err != nil {
		return nil // does not exist yet: cannot be an input
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && os.SameFile(q, fi) {
			return usageError("--quarantine %s is also an input file", quarantine)
		}
	}
	return nil
}

// merger holds one run of the merge command: its output, counters and the
// optional quarantine file.
type merger struct {
	env        *env
	shards     []*shardFile
	out        *bufio.Writer
	quarantine *quarantineFile
	start      time.Time
	lastDraw   time.Time

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
	if m.quarantine != nil {
		if qerr := m.quarantine.Close(); err == nil && qerr != nil {
			err = qerr
		}
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
	if m.quarantine == nil {
		m.skipped++
		m.env.log.Warn("skipped line", "error", le.Error())
		return nil
	}
	if err := m.quarantine.Add(le); err != nil {
		return err
	}
	m.quarantined++
	m.env.log.Info("quarantined line", "error", le.Error())
	return nil
}

func (m *merger) summarize(err error) {
	args := []any{"shards", len(m.shards), "records", m.written,
		"elapsed", time.Since(m.start).Round(time.Millisecond)}
	if m.skipped > 0 {
		args = append(args, "skipped", m.skipped)
	}
	if m.quarantined > 0 {
		args = append(args, "quarantined", m.quarantined, "quarantine", m.quarantine.name)
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

// quarantineFile keeps rejected lines as JSON Lines.
type quarantineFile struct {
	name string
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
}

// quarantineEntry is one rejected line. Raw holds the line when it is
// UTF-8, RawBase64 otherwise; Truncated marks a line over the size limit,
// of which only the first bytes are kept.
type quarantineEntry struct {
	Source    string `json:"source"`
	Line      int64  `json:"line"`
	Reason    string `json:"reason"`
	Raw       string `json:"raw,omitempty"`
	RawBase64 []byte `json:"raw_base64,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

func newQuarantineFile(name string) (*quarantineFile, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("quarantine file: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &quarantineFile{name: name, f: f, w: w, enc: enc}, nil
}

// Add writes one rejected line.
func (q *quarantineFile) Add(le *ordering.LineError) error {
	e := quarantineEntry{Source: le.Source, Line: le.Line, Reason: le.Err.Error(),
		Truncated: errors.Is(le, ordering.ErrLineTooLong)}
	if utf8.Valid(le.Raw) {
		e.Raw = string(le.Raw)
	} else {
		e.RawBase64 = le.Raw
	}
	if err := q.enc.Encode(e); err != nil {
		return fmt.Errorf("writing quarantine file %s: %w", q.name, err)
	}
	return nil
}

// Close flushes and syncs the file, so that what was quarantined is on disk
// when the command reports success.
func (q *quarantineFile) Close() error {
	err := q.w.Flush()
	if err == nil {
		err = q.f.Sync()
	}
	if cerr := q.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing quarantine file %s: %w", q.name, err)
	}
	return nil
}
