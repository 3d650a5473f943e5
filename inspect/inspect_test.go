package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// fakeView is a control.View that answers from its fields; scans yield
// their items, then fail with err when it is set.
type fakeView struct {
	pending    []demangle.PendingTime
	consumers  []recovery.ConsumerInfo
	quarantine []recovery.QuarantineRecord
	records    []recovery.Record
	frontier   uint64
	complete   bool
	walFloor   uint64
	err        error
}

func (f *fakeView) Status() (recovery.Status, error) { return recovery.Status{}, f.err }
func (f *fakeView) ScanPending(fn func(*demangle.PendingTime) error) error {
	if f.err != nil {
		return f.err
	}
	for i := range f.pending {
		if err := fn(&f.pending[i]); err != nil {
			return err
		}
	}
	return nil
}
func (f *fakeView) Records(from uint64, fn func(*recovery.Record) error) error {
	for i := range f.records {
		if f.records[i].Seq < from {
			continue
		}
		if err := fn(&f.records[i]); err != nil {
			return err
		}
	}
	return f.err
}
func (f *fakeView) WAL(uint64, uint64, func(*recovery.WALEntry) error) error { return f.err }
func (f *fakeView) OutputEnd() uint64                                        { return uint64(len(f.records)) + 1 }
func (f *fakeView) OutputStart() uint64                                      { return 1 }
func (f *fakeView) Consumers() ([]recovery.ConsumerInfo, error)              { return f.consumers, f.err }
func (f *fakeView) Frontier() (uint64, bool)                                 { return f.frontier, f.complete }
func (f *fakeView) WALFloor() uint64                                         { return f.walFloor }
func (f *fakeView) Close() error                                             { return nil }
func (f *fakeView) Quarantine(fn func(*recovery.QuarantineRecord) error) error {
	for i := range f.quarantine {
		if err := fn(&f.quarantine[i]); err != nil {
			return err
		}
	}
	return f.err
}

var _ control.View = (*fakeView)(nil)

func pendingView() *fakeView {
	return &fakeView{pending: []demangle.PendingTime{
		{Time: 7, Known: true, Expected: 3, Held: 1},
		{Time: 9, Held: 2},
		{Time: 12, Known: true, Expected: 1, Held: 1},
	}}
}

func TestPendingIsATableForPeopleAndJSONLinesForScripts(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"text", Options{}, "TIME  EXPECTED  HELD  MISSING\n7     3         1     2\n9     unknown   2     ?\n12    1         1     0\n"},
		{"limited", Options{Limit: 1}, "TIME  EXPECTED  HELD  MISSING\n7     3         1     2\n"},
		{"json", Options{JSON: true, Limit: 2}, `{"time":"7","expected":"3","held":1}` + "\n" + `{"time":"9","expected":null,"held":2}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Pending(&b, pendingView(), tt.o); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

// TestPendingMissingIsExactForCountsBeyondInt64: a progress statement may
// give a time any 64-bit count; MISSING is that count less the updates
// held, never a wrapped negative number.
func TestPendingMissingIsExactForCountsBeyondInt64(t *testing.T) {
	v := &fakeView{pending: []demangle.PendingTime{
		{Time: 3, Known: true, Expected: 1<<63 + 1, Held: 1},
		{Time: math.MaxUint64 - 1, Known: true, Expected: math.MaxUint64, Held: 1},
	}}
	var b strings.Builder
	if err := Pending(&b, v, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "TIME                  EXPECTED              HELD  MISSING\n" +
		"3                     9223372036854775809   1     9223372036854775808\n" +
		"18446744073709551614  18446744073709551615  1     18446744073709551614\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestAnEmptyListSaysSoInsteadOfALoneHeader(t *testing.T) {
	for _, tt := range []struct {
		v    *fakeView
		want string
	}{
		{&fakeView{frontier: 40}, "no pending times (frontier 40)\n"},
		{&fakeView{complete: true}, "no pending times (complete)\n"},
	} {
		var b strings.Builder
		if err := Pending(&b, tt.v, Options{}); err != nil || b.String() != tt.want {
			t.Errorf("Pending: %q, %v; want %q", b.String(), err, tt.want)
		}
	}
	var b strings.Builder
	if err := Consumers(&b, &fakeView{}, Options{}); err != nil || b.String() != "no consumers\n" {
		t.Errorf("Consumers: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := Consumers(&b, &fakeView{}, Options{JSON: true}); err != nil || b.String() != "" {
		t.Errorf("Consumers --json of none: %q, %v; want nothing", b.String(), err)
	}
}

func TestQuarantineShowsRawBytesQuotedShortenedOrAsTheirSize(t *testing.T) {
	long := strings.Repeat("é", 70)
	v := &fakeView{quarantine: []recovery.QuarantineRecord{
		{Seq: 1, Time: time.Unix(0, 0).UTC(), Reject: cdc.Reject{Pos: cdc.Pos{Source: "in", Line: 3, Offset: 40}, Raw: []byte(long), Reason: "bad"}},
		{Seq: 2, Reject: cdc.Reject{Pos: cdc.Pos{Source: "in.mp", Offset: 9}, Raw: []byte{0xff, 0x00}, Reason: "worse"}},
	}}
	var b strings.Builder
	if err := Quarantine(&b, v, Options{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("SEQ  POSITION       REASON  RAW\n1    in:3           bad     %q\n2    in.mp: byte 9  worse   (2 bytes, not UTF-8; see --json)\n",
		strings.Repeat("é", 60)+"…")
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := Quarantine(&b, v, Options{JSON: true, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	var line QuarantineLine
	if err := json.Unmarshal([]byte(b.String()), &line); err != nil || line.Seq != 1 || line.Offset != 40 || line.Raw != long || line.Time != "1970-01-01T00:00:00Z" {
		t.Errorf("JSON line %q: %+v, %v", b.String(), line, err)
	}
}

func TestAViewWhoseProcessWentAwayBeforeWritingAsksForARetry(t *testing.T) {
	gone := fmt.Errorf("status: %w", control.ErrGone)
	var b strings.Builder
	if err := Pending(&b, &fakeView{err: gone}, Options{}); !errors.Is(err, ErrGone) || b.Len() != 0 {
		t.Fatalf("nothing written: %q, %v; want ErrGone and no output", b.String(), err)
	}
	// Once a line is out, a retry would repeat it: the going is an error.
	v := &fakeView{quarantine: []recovery.QuarantineRecord{{Seq: 1}}, err: gone}
	err := Quarantine(&b, v, Options{JSON: true})
	if errors.Is(err, ErrGone) || !errors.Is(err, control.ErrGone) || !strings.HasPrefix(err.Error(), "read quarantine: ") {
		t.Fatalf("after a line: %v; want the going, read quarantine's error", err)
	}
}

func TestConsumersTellWhetherEachIsOpen(t *testing.T) {
	v := &fakeView{consumers: []recovery.ConsumerInfo{{Name: "billing", Next: 12, Lag: 3, Open: true}, {Name: "audit", Next: 1, Lag: 14}}}
	var b strings.Builder
	if err := Consumers(&b, v, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "NAME     NEXT  LAG  OPEN\nbilling  12    3    yes\naudit    1     14   no\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestStatusTextShowsEachBrokerPartitionAndSinkOnALine(t *testing.T) {
	p0, epoch, end, lag := int32(0), int32(3), int64(1210), int64(6)
	v := &StatusView{Positions: relay.Positions{
		Inputs: []relay.InputPosition{
			{Input: "kafka:cdc", Broker: "kafka", Partition: &p0, Next: 1204, LeaderEpoch: &epoch, LogEnd: &end, Lag: &lag, LogEndSeenAt: "T1"},
			{Input: "nats:IN/x", Broker: "nats", Next: 5, StreamCreated: "T0"},
		},
		Sinks: []relay.SinkPosition{{Output: "kafka:clean", SinkID: "clean", Acked: 40, Lag: 2, RecordedAt: "T2"}},
	}}
	var b strings.Builder
	if err := writeStatusText(&b, v); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"input kafka:cdc/0:", "next offset 1204, leader epoch 3; log end 1210, lag 6, as seen at T1",
		"input nats:IN/x:", "next sequence 5, stream created T0; log end not known offline",
		"sink kafka:clean:", "record 40 acknowledged by the output at T2, lag 2; sink id clean",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGCWritesTextWithTheNoteOrOneJSONObject(t *testing.T) {
	res := &recovery.GCResult{Floor: 40, ChunksDeleted: 2, OutputFrom: 1, OutputHeldBy: "nothing", BytesBefore: 40960, BytesAfter: 512}
	var b strings.Builder
	if err := GC(&b, "state.db", res, "not compacted: later writes reuse the freed pages", Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"database:         state.db\n",
		"wal floor:        40 (the WAL below this time is dropped, whole chunks at a time)\n",
		"output dropped:   none\n",
		"size before:      40960 bytes (40.0 KiB)\n",
		"size after:       512 bytes (not compacted: later writes reuse the freed pages)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("gc text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := GC(&b, "state.db", res, "ignored", Options{JSON: true}); err != nil {
		t.Fatal(err)
	}
	var back recovery.GCResult
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back != *res {
		t.Errorf("gc JSON %s: %+v, %v", b.String(), back, err)
	}
}

func TestGCNoteSaysWhyTheFileWasNotCompacted(t *testing.T) {
	held := &control.Holder{Info: control.Info{PID: 42}, Socket: "state.db.sock"}
	tests := []struct {
		name      string
		held      *control.Holder
		noCompact bool
		want      string
	}{
		{"compacted", nil, false, ""},
		{"asked not to", nil, true, "not compacted: later writes reuse the freed pages"},
		{"held by a running cdclog", held, false, "not compacted: held by a running cdclog, which reuses the freed pages"},
		{"held, and asked not to", held, true, "not compacted: held by a running cdclog, which reuses the freed pages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GCNote(tc.held, tc.noCompact); got != tc.want {
				t.Fatalf("GCNote = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProblemCountSaysOneProblemOrMany(t *testing.T) {
	if got := ProblemCount(&recovery.CheckReport{Problems: []recovery.Problem{{}}}); got != "1 problem" {
		t.Errorf("one: %q", got)
	}
	if got := ProblemCount(&recovery.CheckReport{Problems: []recovery.Problem{{}, {}}, ProblemsOmitted: 3}); got != "5 problems" {
		t.Errorf("five: %q", got)
	}
}

func TestVerifySaysIdenticalOrShowsTheFirstDifferenceWithWhatGCDropped(t *testing.T) {
	tests := []struct {
		name     string
		res      recovery.VerifyResult
		walFloor uint64
		want     string
	}{
		{"identical", recovery.VerifyResult{Compared: 12, Match: true, OutputFrom: 1}, 0, "verified 12 records: identical\n"},
		{"identical after gc", recovery.VerifyResult{Compared: 5, Match: true, OutputFrom: 8}, 40,
			"verified 5 records (from time 40 on: gc dropped the WAL below it; from record 8 on: gc's retention dropped the output before it): identical\n"},
		{"a complete stream's WAL dropped whole", recovery.VerifyResult{Match: true, OutputFrom: 1}, ^uint64(0),
			"verified 0 records (gc dropped the WAL of the whole stream, which is complete): nothing was left to compare\n"},
		{"a database that released nothing", recovery.VerifyResult{Match: true, OutputFrom: 1}, 0,
			"verified 0 records: the stored output and the re-derived stream are both empty\n"},
		{"the re-derived stream ends first", recovery.VerifyResult{Compared: 3, FirstDiff: 4, Stored: "update(a, 7, +1)", OutputFrom: 1}, 0,
			"verified 3 records, then first difference at record 4:\n  stored:     update(a, 7, +1)\n  re-derived: (nothing: the re-derived stream ends here)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := Verify(&b, &tt.res, tt.walFloor); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.name, b.String(), tt.want)
		}
	}
}

// failWriter fails every write.
type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestAFailedWriteIsAWriteErrorNotAReadError: when the output cannot be
// written (a full disk, a closed pipe), the error says so, not that the
// view could not read the database.
func TestAFailedWriteIsAWriteErrorNotAReadError(t *testing.T) {
	full := errors.New("no space left on device")
	for _, o := range []Options{{}, {JSON: true}} {
		err := Output(failWriter{full}, &fakeView{records: []recovery.Record{{Seq: 1}, {Seq: 2}}}, 1, o)
		if !errors.Is(err, full) || !strings.HasPrefix(err.Error(), "write output: ") {
			t.Errorf("JSON %v: %v, want a write error", o.JSON, err)
		}
	}
}

// TestAnEmptyWALListingSaysWhenGCDroppedTheRange: a time range below the
// WAL floor is empty because gc dropped it, and the listing says so.
func TestAnEmptyWALListingSaysWhenGCDroppedTheRange(t *testing.T) {
	for _, tt := range []struct {
		floor, from uint64
		want        string
	}{
		{0, 0, "no WAL entries in the time range\n"},
		{300, 0, "no WAL entries in the time range (gc dropped the WAL below time 300)\n"},
		{300, 299, "no WAL entries in the time range (gc dropped the WAL below time 300)\n"},
		{300, 300, "no WAL entries in the time range\n"},
	} {
		var b strings.Builder
		if err := WAL(&b, &fakeView{walFloor: tt.floor}, tt.from, math.MaxUint64, Options{}); err != nil || b.String() != tt.want {
			t.Errorf("floor %d, from %d: %q, %v; want %q", tt.floor, tt.from, b.String(), err, tt.want)
		}
	}
}
