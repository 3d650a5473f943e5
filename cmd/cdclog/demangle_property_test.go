package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// For generated streams and any duplication and reordering, demangle's
// update lines are identical whatever the mangling, and its progress
// statements reach the end of the stream (gen's final statement makes it
// complete): through the codecs and the command, not only the receiver.
func TestDemangleOutputDoesNotDependOnTheMangling(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Int64Range(0, 1000).Draw(rt, "seed")
		times := rapid.IntRange(1, 300).Draw(rt, "times")
		format := rapid.SampledFrom([]string{"jsonl", "msgpack"}).Draw(rt, "format")
		stream := mustRun(t, "", "--out-format", format, "gen", "--seed", fmt.Sprint(seed), "--times", fmt.Sprint(times))
		var updates []string
		for k := 0; k < 2; k++ {
			mangled := mustRun(t, stream, "--format", format, "mangle",
				"--seed", fmt.Sprint(rapid.Int64().Draw(rt, "mangle-seed")),
				"--max-delay", fmt.Sprint(rapid.IntRange(0, 64).Draw(rt, "delay")),
				"--max-copies", fmt.Sprint(rapid.IntRange(1, 4).Draw(rt, "copies")))
			clean := mustRun(t, mangled, "--quiet", "--in-format", format, "demangle")
			_, frontier := cleanFacts(t, clean)
			if frontier != cdc.MaxTime {
				rt.Fatalf("frontier %d after %d times, want the stream complete", frontier, times)
			}
			u := updateLines([]byte(clean))
			if k == 1 && strings.Join(u, "\n") != strings.Join(updates, "\n") {
				rt.Fatalf("update lines differ between two manglings")
			}
			updates = u
		}
	})
}
