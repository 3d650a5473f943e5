package relay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

func TestParseInputsSortsFilesFromBrokersAndRefusesAnInputTwice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		names   []string
		files   []string
		brokers []string // their Names
		err     string
	}{
		{"none is stdin", nil, []string{"-"}, nil, ""},
		{"files and brokers in order", []string{"kafka://b1/t", "a.jsonl", "nats://n/S/s", "-"}, []string{"a.jsonl", "-"}, []string{"kafka:t", "nats:S/s"}, ""},
		{"brokers only", []string{"kafka://b1/t"}, nil, []string{"kafka:t"}, ""},
		{"one topic by two servers", []string{"kafka://b1/t", "kafka://b2:9093/t"}, nil, nil, "input kafka:t is given twice (each input commits one position)"},
		{"a bad URL", []string{"kafka://"}, nil, nil, "kafka"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseInputs(tc.names)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseInputs = %+v, %v; want an error saying %q", l, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var brokers []string
			for _, ep := range l.Brokers {
				brokers = append(brokers, ep.Name())
			}
			if !slices.Equal(l.Files, tc.files) || !slices.Equal(brokers, tc.brokers) {
				t.Errorf("files %q, brokers %q; want %q, %q", l.Files, brokers, tc.files, tc.brokers)
			}
		})
	}
	var de *DuplicateInputError
	if _, err := ParseInputs([]string{"nats://n/S/s", "nats://m/S/s"}); !errors.As(err, &de) || de.Name != "nats:S/s" {
		t.Errorf("a duplicate gives %v, want a *DuplicateInputError", err)
	}
}

func TestOpenGivesFilesInTurnAndBrokersOrAFollowedFileEndless(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	names := func(srcs []recovery.Source) []string {
		var out []string
		for _, s := range srcs {
			out = append(out, s.Name())
		}
		return out
	}
	for _, tc := range []struct {
		name            string
		inputs          []string
		follow          bool
		inTurn, endless []string
		display         []string
	}{
		{"files and stdin", []string{a, "-"}, false, []string{"input:" + a, ""}, nil, []string{a, "-"}},
		{"a file and a broker", []string{"kafka://b1/t", a}, false, []string{"input:" + a}, []string{"kafka:t"}, []string{a, "-"}},
		{"a followed file", []string{a}, true, nil, []string{"input:" + a}, []string{a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseInputs(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			in, err := l.Open(InputOptions{Stdin: strings.NewReader(""), Follow: tc.follow, Source: SourceOptions{Logger: quiet}})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if got := names(in.InTurn); !slices.Equal(got, tc.inTurn) {
				t.Errorf("in turn %q, want %q", got, tc.inTurn)
			}
			if got := names(in.Endless); !slices.Equal(got, tc.endless) {
				t.Errorf("endless %q, want %q", got, tc.endless)
			}
			if !slices.Equal(in.Names, tc.display) {
				t.Errorf("names %q, want %q", in.Names, tc.display)
			}
		})
	}
}

func TestOpenRefusesAMissingFileABrokersOptionAndFollowingStdin(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		inputs []string
		o      InputOptions
		is     error
		says   string // in the error, when set
	}{
		{"missing file", []string{a, filepath.Join(dir, "missing")}, InputOptions{}, fs.ErrNotExist, ""},
		{"a consumer group for NATS", []string{a, "kafka://k/t", "nats://n/S/s"}, InputOptions{Source: SourceOptions{CommitGroup: "g"}}, ErrOption, ""},
		{"a consumer group without Kafka", []string{a, "nats://n/S/s"}, InputOptions{Source: SourceOptions{CommitGroup: "g"}}, cdc.ErrOption, ""},
		{"following stdin", []string{"-"}, InputOptions{Follow: true}, cdc.ErrOption, "not stdin"},
		{"following two files", []string{a, a}, InputOptions{Follow: true}, cdc.ErrOption, "give exactly one, not 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseInputs(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			tc.o.Source.Logger = quiet
			in, err := l.Open(tc.o)
			if !errors.Is(err, tc.is) {
				t.Fatalf("Open = %+v, %v; want %v", in, err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Open: %v, want it to say %q", err, tc.says)
			}
		})
	}
}

func TestInputListValidateRefusesOptionsNoInputTakes(t *testing.T) {
	files := []string{"a.jsonl"}
	nats := []string{"a.jsonl", "nats://n/S/s"}
	kafka := []string{"nats://n/S/s", "kafka://k/t"}
	for _, tc := range []struct {
		name   string
		inputs []string
		o      SourceOptions
		want   string // "" when valid
	}{
		{"files, no broker options", files, SourceOptions{}, ""},
		{"allow gap for NATS", nats, SourceOptions{AllowGap: true}, ""},
		{"every option with Kafka", kafka, SourceOptions{AllowGap: true, CommitGroup: "g", PartitionCheck: time.Second}, ""},
		{"allow gap without a broker", files, SourceOptions{AllowGap: true},
			"--allow-gap applies to broker inputs (--from kafka://... or nats://...), and there is none"},
		{"commit group without a broker", files, SourceOptions{CommitGroup: "g"},
			"--commit-group applies to broker inputs (--from kafka://... or nats://...), and there is none"},
		{"partition check without a broker", files, SourceOptions{PartitionCheck: time.Second},
			"--partition-check applies to broker inputs (--from kafka://... or nats://...), and there is none"},
		{"commit group without Kafka", nats, SourceOptions{CommitGroup: "g"}, "--commit-group applies to Kafka inputs, and there is none"},
		{"partition check without Kafka", nats, SourceOptions{PartitionCheck: time.Second}, "--partition-check applies to Kafka inputs, and there is none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseInputs(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			err = l.Validate(tc.o)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, cdc.ErrOption) || err.Error() != tc.want {
				t.Fatalf("Validate = %v, want %q matching cdc.ErrOption", err, tc.want)
			}
			// Open refuses them the same way, before it opens the file.
			if in, err := l.Open(InputOptions{Source: tc.o}); err == nil || err.Error() != tc.want {
				t.Fatalf("Open = %+v, %v; want %q", in, err, tc.want)
			}
		})
	}
}

func TestErrOptionMatchesCDCErrOption(t *testing.T) {
	if !errors.Is(fmt.Errorf("x: %w", ErrOption), cdc.ErrOption) {
		t.Fatal("relay.ErrOption does not match cdc.ErrOption")
	}
}

func TestOpenNamesDoNotShareTheListsFiles(t *testing.T) {
	dir := t.TempDir()
	l := InputList{Files: make([]string, 0, 4)}
	for _, n := range []string{"a", "b"} {
		p := filepath.Join(dir, n+".jsonl")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		l.Files = append(l.Files, p)
	}
	bl, err := ParseInputs([]string{"kafka://b1/t"})
	if err != nil {
		t.Fatal(err)
	}
	l.Brokers = bl.Brokers
	in, err := l.Open(InputOptions{Source: SourceOptions{Logger: quiet}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	want := []string{l.Files[0], l.Files[1], "-"}
	l.Files = append(l.Files, "later") // the caller's list grows after Open
	if !slices.Equal(in.Names, want) {
		t.Fatalf("names %q after the list grew, want %q", in.Names, want)
	}
}
