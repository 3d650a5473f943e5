package cdc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateRejectFileRefusesAnInputHoweverItIsNamed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		path      string
		inputs    []string
		wantInput string
		says      string
	}{
		{"the input file", in, []string{other, in}, in, "is also an input file (" + in + ")"},
		{"a link to it", link, []string{in}, in, "is also an input file"},
		{"stdin, named", in, []string{"-"}, "-", "is also the input (stdin reads it)"},
		{"stdin, by no inputs", link, nil, "-", "is also the input (stdin reads it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := CreateRejectFile(tc.path, tc.inputs, stdin)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("CreateRejectFile = %v, %v; want an *InputError", f, err)
			}
			if ie.Path != tc.path || ie.Input != tc.wantInput || !strings.Contains(err.Error(), tc.says) || !errors.Is(err, ErrOption) {
				t.Errorf("got %+v (%q), want input %q saying %q", ie, err, tc.wantInput, tc.says)
			}
			if b, _ := os.ReadFile(in); string(b) != "keep me\n" {
				t.Fatalf("the input now holds %q", b)
			}
		})
	}
}

func TestARejectFileHoldsEveryRejectOnceClosed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rejected.jsonl")
	if err := os.WriteFile(path, []byte("an earlier run's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := CreateRejectFile(path, []string{filepath.Join(dir, "in.jsonl")}, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Reject{
		{Pos: Pos{Source: "in", Line: 3, Offset: 40}, Raw: []byte("not json"), Reason: "malformed"},
		{Pos: Pos{Source: "in", Line: 9, Offset: 90}, Raw: []byte{0xff}, Reason: "not UTF-8"},
	} {
		if err := f.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if f.Count() != 2 || f.Name() != path {
		t.Errorf("Count %d, Name %q; want 2, %q", f.Count(), f.Name(), path)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"source":"in","line":3,"offset":40,"reason":"malformed","raw":"not json"}` + "\n" +
		`{"source":"in","line":9,"offset":90,"reason":"not UTF-8","raw_base64":"/w=="}` + "\n"
	if string(b) != want {
		t.Errorf("file holds\n%s\nwant\n%s", b, want)
	}
}

func TestCreateRejectFileInAMissingDirectoryFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "rejected.jsonl")
	if _, err := CreateRejectFile(path, []string{"in"}, nil); err == nil || !strings.HasPrefix(err.Error(), "quarantine file: ") {
		t.Fatalf("CreateRejectFile = %v, want a quarantine file error", err)
	}
}

func TestClosingANilRejectFileDoesNothing(t *testing.T) {
	var f *RejectFile // a run without --quarantine
	if err := f.Close(); err != nil {
		t.Fatalf("Close of a nil *RejectFile: %v", err)
	}
}
