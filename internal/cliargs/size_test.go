package cliargs

import "testing"

func TestParseSizeTakesBytesAndUnits(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "512": 512, "512B": 512, "1KiB": 1024, "1k": 1024, "64MiB": 64 << 20, "64M": 64 << 20,
		"64MB": 64e6, "2GiB": 2 << 30, "1 MiB": 1 << 20, "8TiB": 8 << 40,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseSizeRefusesWhatIsNotASize(t *testing.T) {
	for _, in := range []string{"", "MiB", "-1", "1.5MiB", "1 PiB", "ten", "9999999TiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}
