package recovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// retentionFixture opens a processor whose output log has many chunks:
// each append of a few times is a commit of its own.
func retentionFixture(t *testing.T, o Options) (*Processor, string, []cdc.Message) {
	t.Helper()
	path := dbPath(t)
	msgs := cleanStream(5, 0, 300)
	p := openTest(t, path, o)
	appendAll(t, p, msgs, 20)
	return p, path, msgs
}

// suffixFrom returns the records of a rendered stream from seq from on.
func suffixFrom(clean []byte, from uint64) []byte {
	lines := bytes.SplitAfter(clean, []byte("\n"))
	return bytes.Join(lines[from-1:], nil)
}

func TestRetentionParsesCountsDurationsAndAll(t *testing.T) {
	for in, want := range map[string]Retention{
		"all": KeepAll, "": KeepAll, "1000000": RetainRecords(1e6), "0": RetainRecords(0),
		"72h": RetainFor(72 * time.Hour), "90s": RetainFor(90 * time.Second),
	} {
		got, err := ParseRetention(in)
		if err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %+v, %v, want %+v", in, got, err, want)
		}
		if err == nil && in != "" {
			if back, _ := ParseRetention(got.String()); back != got {
				t.Errorf("%q: String %q does not read back", in, got.String())
			}
		}
	}
	for _, in := range []string{"-1", "1.5", "soon", "-3h", "0s"} {
		if _, err := ParseRetention(in); err == nil {
			t.Errorf("ParseRetention(%q) accepted", in)
		}
	}
}

func TestGCKeepsEveryOutputRecordByDefault(t *testing.T) {
	p, path, msgs := retentionFixture(t, Options{})
	res, err := p.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom != 1 || res.OutputChunksDeleted != 0 || !strings.Contains(res.OutputHeldBy, "every record") {
		t.Fatalf("default GC: %+v", res)
	}
	if res.ChunksDeleted == 0 || res.Floor != 300 {
		t.Fatalf("default GC did not drop the WAL below the frontier: %+v", res)
	}
	p.Close()
	if got := storedOutput(t, path); !bytes.Equal(got, inMemory(t, msgs)) {
		t.Fatal("the output log changed")
	}
}

func TestRetentionNeverDropsWhatARegisteredConsumerHasNotCommitted(t *testing.T) {
	p, path, msgs := retentionFixture(t, Options{})
	ctx := context.Background()
	clean := inMemory(t, msgs)
	end := p.OutputEnd()
	slow, err := p.Consumer("slow")
	if err != nil {
		t.Fatal(err)
	}
	if err := slow.Commit(ctx, 40); err != nil {
		t.Fatal(err)
	}
	fast, err := p.Consumer("fast")
	if err != nil {
		t.Fatal(err)
	}
	if err := fast.Commit(ctx, end-30); err != nil {
		t.Fatal(err)
	}
	res, err := p.GC(ctx, GCOptions{RetainOutput: RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom > 41 || res.OutputFrom == 1 || !strings.Contains(res.OutputHeldBy, `consumer "slow"`) {
		t.Fatalf("GC with a consumer at 41: %+v", res)
	}
	if res.OutputRecordsDropped != res.OutputFrom-1 || p.OutputStart() != res.OutputFrom {
		t.Fatalf("dropped %d records, output from %d, OutputStart %d", res.OutputRecordsDropped, res.OutputFrom, p.OutputStart())
	}
	// The slow consumer, reopened, reads on from its position, and a new
	// one starts where the log now starts.
	slow.Close()
	if slow, err = p.Consumer("slow"); err != nil {
		t.Fatal(err)
	}
	if r, err := slow.Next(ctx); err != nil || r.Seq != 41 {
		t.Fatalf("the slow consumer's next record: %d, %v", r.Seq, err)
	}
	slow.Close()
	if err := p.DeleteConsumer(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	res, err = p.GC(ctx, GCOptions{RetainOutput: RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom <= 41 || res.OutputFrom > end-29 || !strings.Contains(res.OutputHeldBy, `consumer "fast"`) {
		t.Fatalf("GC with the slow consumer deleted: %+v (fast at %d)", res, end-29)
	}
	late, err := p.Consumer("late")
	if err != nil {
		t.Fatal(err)
	}
	if late.Position() != res.OutputFrom {
		t.Fatalf("a new consumer starts at %d, the log at %d", late.Position(), res.OutputFrom)
	}
	late.Close()
	fast.Close()
	p.Close()
	if got := recordsFrom(t, path, res.OutputFrom); !bytes.Equal(got, suffixFrom(clean, res.OutputFrom)) {
		t.Fatal("the records kept are not the clean stream's")
	}
}

func TestReadingBelowTheOutputFloorSaysWhatIsKept(t *testing.T) {
	p, path, _ := retentionFixture(t, Options{})
	ctx := context.Background()
	res, err := p.GC(ctx, GCOptions{RetainOutput: RetainRecords(50)})
	if err != nil {
		t.Fatal(err)
	}
	end := p.OutputEnd()
	if res.OutputFrom <= 1 || res.OutputFrom > end-50 {
		t.Fatalf("keep 50 of %d: %+v", end-1, res)
	}
	var gone *OutputDroppedError
	for _, err := range p.Output(ctx, 1) {
		if !errors.As(err, &gone) || gone.From != 1 || gone.First != res.OutputFrom || !errors.Is(err, ErrOutputDropped) {
			t.Fatalf("Output(1) after retention: %v", err)
		}
		break
	}
	c, err := p.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Seek(ctx, res.OutputFrom-1); !errors.Is(err, ErrCommitRange) || !errors.As(err, &gone) {
		t.Fatalf("Seek below the floor = %v", err)
	}
	if err := c.Seek(ctx, res.OutputFrom); err != nil {
		t.Fatalf("Seek to the floor: %v", err)
	}
	c.Close()
	p.Close()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatalf("reopen after retention: %v", err)
	}
	defer r.Close()
	if r.OutputStart() != res.OutputFrom {
		t.Fatalf("Reader.OutputStart() = %d, want %d", r.OutputStart(), res.OutputFrom)
	}
	err = r.Records(3, func(*Record) error { return nil })
	if !errors.As(err, &gone) || gone.First != res.OutputFrom {
		t.Fatalf("Reader.Records(3) = %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("from %d on", res.OutputFrom)) {
		t.Fatalf("the error does not say what is kept: %v", err)
	}
}

func TestRetentionNeverDropsWhatTheOutputFileLacks(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(9, 0, 300)
	clean := inMemory(t, msgs)
	runWithSink(t, path, out, msgs[:200]) // the file holds the first part
	p := openTest(t, path, Options{})     // later runs write no file
	appendAll(t, p, msgs[200:], 10)
	st, _ := p.Status()
	fileNext := uint64(bytes.Count(readFileOrNil(t, out), []byte("\n"))) + 1
	res, err := p.GC(context.Background(), GCOptions{RetainOutput: RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom > fileNext || !strings.Contains(res.OutputHeldBy, "output file") {
		t.Fatalf("GC with an output file at record %d of %d: %+v", fileNext, st.OutputRecords, res)
	}
	p.Close()
	// The file, attached again, catches up on everything.
	runWithSink(t, path, out, nil)
	if got := readFileOrNil(t, out); !bytes.Equal(got, clean) {
		t.Fatalf("the output file after retention and a catch-up: %d bytes, want %d", len(got), len(clean))
	}
	// Now the file holds every record: the log drops to its last chunk.
	res, err = GC(path, GCOptions{RetainOutput: RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom <= fileNext || !strings.Contains(res.OutputHeldBy, "last chunk") {
		t.Fatalf("GC once the file holds everything: %+v", res)
	}
}

// failingWriter accepts n writes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("reader went away")
	}
	w.n--
	return len(b), nil
}

func TestRetentionNeverDropsWhatTheOutputStreamMayLack(t *testing.T) {
	path := dbPath(t)
	msgs := cleanStream(11, 0, 300)
	p := openTest(t, path, Options{Live: &failingWriter{n: 3}})
	ctx := context.Background()
	var failed error
	for i := 0; i < len(msgs) && failed == nil; i += 20 {
		_, failed = p.Append(ctx, msgs[i:min(len(msgs), i+20)], nil)
	}
	p.Close()
	if !errors.Is(failed, ErrLiveOutput) {
		t.Fatalf("the stream did not fail: %v", failed)
	}
	st := dbStatusOf(t, path)
	res, err := GC(path, GCOptions{RetainOutput: RetainRecords(0)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	liveNext := r.cp.LiveNext
	r.Close()
	if liveNext >= st.OutputRecords+1 || res.OutputFrom > liveNext || !strings.Contains(res.OutputHeldBy, "output stream") {
		t.Fatalf("GC with the stream owed records from %d of %d: %+v", liveNext, st.OutputRecords, res)
	}
	owed := recordsFrom(t, path, liveNext)
	var live bytes.Buffer
	p = openTest(t, path, Options{Live: &live}) // the next run with a stream catches up
	p.Close()
	if len(owed) == 0 || !bytes.Equal(live.Bytes(), owed) {
		t.Fatalf("the stream caught up on %d bytes, want the %d bytes of records %d on", live.Len(), len(owed), liveNext)
	}
}

func TestRetentionByAgeDropsOnlyWhatIsOlder(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 2 s for the time marks")
	}
	path := dbPath(t)
	msgs := cleanStream(13, 0, 200)
	p := openTest(t, path, Options{})
	defer p.Close()
	ctx := context.Background()
	appendAll(t, p, msgs[:150], 10)
	time.Sleep(markEvery + 100*time.Millisecond)
	young := p.OutputEnd() // the first record of the next commit, which marks its time
	appendAll(t, p, msgs[150:], 10)
	res, err := p.GC(ctx, GCOptions{RetainOutput: RetainFor(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom != 1 {
		t.Fatalf("an hour's retention dropped records: %+v", res)
	}
	time.Sleep(700 * time.Millisecond)
	res, err = p.GC(ctx, GCOptions{RetainOutput: RetainFor(500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputFrom <= 1 || res.OutputFrom > young || !strings.Contains(res.OutputHeldBy, "last 500ms") {
		t.Fatalf("records committed over 1.7 s ago and 0.7 s ago, keep 500ms: %+v (the young ones from %d)", res, young)
	}
}

func TestVerifyAndCheckHoldAfterRetention(t *testing.T) {
	for _, keepWAL := range []uint64{^uint64(0), 30} {
		t.Run(fmt.Sprintf("keep-wal-%d", keepWAL), func(t *testing.T) {
			p, path, msgs := retentionFixture(t, Options{})
			p.Close()
			res, err := GC(path, GCOptions{KeepTimes: keepWAL, RetainOutput: RetainRecords(100)})
			if err != nil {
				t.Fatal(err)
			}
			if res.OutputFrom <= 1 || !res.Compacted {
				t.Fatalf("gc: %+v", res)
			}
			rep, err := Check(path, CheckOptions{})
			if err != nil || !rep.OK || rep.OutputFrom != res.OutputFrom {
				t.Fatalf("check after retention: %v %+v", err, rep)
			}
			r, err := OpenReader(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			v, err := r.Verify()
			r.Close()
			if err != nil || !v.Match || v.OutputFrom != res.OutputFrom || v.FromSeq < res.OutputFrom || v.Compared == 0 {
				t.Fatalf("verify after retention: %v %+v", err, v)
			}
			if got, want := recordsFrom(t, path, res.OutputFrom), suffixFrom(inMemory(t, msgs), res.OutputFrom); !bytes.Equal(got, want) {
				t.Fatal("the records kept are not the clean stream's")
			}
			// The database opens and goes on.
			p = openTest(t, path, Options{})
			appendAll(t, p, cleanStream(5, 300, 320), 5)
			p.Close()
			if rep, _ := Check(path, CheckOptions{}); !rep.OK {
				t.Fatalf("check after more appends: %+v", rep.Problems)
			}
		})
	}
}

func TestOpenRefusesAnOutputFloorThatIsNotTheLogsFirstChunk(t *testing.T) {
	p, path, _ := retentionFixture(t, Options{})
	p.Close()
	if _, err := GC(path, GCOptions{RetainOutput: RetainRecords(100), NoCompact: true}); err != nil {
		t.Fatal(err)
	}
	editCheckpoint(t, path, func(cp *checkpoint) { cp.OutputFloor++ })
	if _, err := Open(path, Options{Logger: quietLogger()}); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("open with a wrong output floor: %v", err)
	}
}
