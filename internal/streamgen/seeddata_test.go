package streamgen

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// seedInfo is the JSON file that scripts/seedstream.py writes next to each
// seed stream.
type seedInfo struct {
	Messages        int      `json:"messages"`
	Times           uint64   `json:"times"`
	DistinctUpdates int      `json:"distinct_updates"`
	Emitted         int      `json:"seed_demangler_times_emitted"`
	Lost            int      `json:"seed_demangler_times_lost"`
	LostTimes       []uint64 `json:"seed_demangler_lost_times"`
	SHA256          string   `json:"sha256"`
}

// seedLine is one line of a seed stream, in the seed's progress shape.
type seedLine struct {
	Update *struct {
		Data json.RawMessage `json:"data"`
		Time uint64          `json:"time"`
		Diff int64           `json:"diff"`
	} `json:"update"`
	Progress *struct {
		Time  uint64 `json:"time"`
		Count uint64 `json:"count"`
	} `json:"progress"`
}

// TestSeedStreamsAreCompleteAndMatchTheirNumbers checks the test data in
// testdata/seed: each stream is the one its JSON file counted (digest and
// size), and it holds everything a correct receiver needs to release every
// one of its times, including the ones the seed's demangler loses.
func TestSeedStreamsAreCompleteAndMatchTheirNumbers(t *testing.T) {
	for _, name := range []string{"resilient", "naive"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "seed")
			var info seedInfo
			raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &info); err != nil {
				t.Fatal(err)
			}
			stream, err := os.ReadFile(filepath.Join(dir, name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(stream)
			if got := hex.EncodeToString(sum[:]); got != info.SHA256 {
				t.Fatalf("stream digest %s, recorded %s: regenerate with scripts/seedstream.py", got, info.SHA256)
			}
			checkSeedStream(t, stream, info)
		})
	}
}

func checkSeedStream(t *testing.T, stream []byte, info seedInfo) {
	counts := map[uint64]uint64{}
	updates := map[uint64]map[string]bool{}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		lines++
		var l seedLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		switch {
		case l.Update != nil && l.Update.Diff != 0:
			if updates[l.Update.Time] == nil {
				updates[l.Update.Time] = map[string]bool{}
			}
			updates[l.Update.Time][string(l.Update.Data)] = true
		case l.Progress != nil:
			if old, ok := counts[l.Progress.Time]; ok && old != l.Progress.Count {
				t.Fatalf("line %d: count %d for time %d, earlier %d", lines, l.Progress.Count, l.Progress.Time, old)
			}
			counts[l.Progress.Time] = l.Progress.Count
		default:
			t.Fatalf("line %d: neither an update with a diff nor progress: %s", lines, sc.Bytes())
		}
	}
	if lines != info.Messages {
		t.Fatalf("%d lines, recorded %d messages", lines, info.Messages)
	}
	distinct := 0
	for tm := range info.Times {
		n, ok := counts[tm]
		if !ok || n != uint64(len(updates[tm])) {
			t.Fatalf("time %d: progress %v (present %v), %d distinct updates", tm, n, ok, len(updates[tm]))
		}
		distinct += len(updates[tm])
	}
	if len(counts) != int(info.Times) || distinct != info.DistinctUpdates {
		t.Fatalf("%d times and %d distinct updates, recorded %d and %d", len(counts), distinct, info.Times, info.DistinctUpdates)
	}
	if info.Lost == 0 || info.Lost != len(info.LostTimes) || info.Emitted+info.Lost != int(info.Times) {
		t.Fatalf("recorded losses do not add up: %+v", info)
	}
}
