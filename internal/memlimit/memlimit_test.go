package memlimit

import "testing"

func TestParseSizeReadsBytesAndUnits(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
	}{
		{"0", 0}, {"none", 0}, {"NONE", 0}, {"1000000", 1000000}, {"512MiB", 512 << 20}, {"512M", 512 << 20},
		{"512mib", 512 << 20}, {"4G", 4 << 30}, {"4 GiB", 4 << 30}, {"1.5GiB", 3 << 29}, {"2GB", 2e9},
		{"10KB", 10000}, {"10K", 10240}, {"1T", 1 << 40}, {"100B", 100},
	}
	for _, c := range cases {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseSizeRefusesWhatIsNotASize(t *testing.T) {
	for _, in := range []string{"", "GiB", "-1G", "lots", "1e9", "0x10", "1,5G", "1 2G", "inf", "NaN", "99999999999TiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSizeUsesTheLargestUnit(t *testing.T) {
	cases := map[uint64]string{100: "100 bytes", 512 << 20: "512 MiB", 12 << 30: "12 GiB", 3 << 29: "1.5 GiB"}
	for n, want := range cases {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDefaultIsHalfTheMachinesMemory(t *testing.T) {
	d := Default()
	if p := physical(); p > 0 && d != p/2 {
		t.Errorf("Default() = %d, physical memory %d", d, p)
	}
	if d == 0 {
		t.Error("no default limit")
	}
}

func TestAGuardWithoutALimitIsNeverExceeded(t *testing.T) {
	var g *Guard
	if _, over := g.Exceeded(); over {
		t.Error("nil guard exceeded")
	}
	if _, over := (&Guard{}).Exceeded(); over {
		t.Error("zero guard exceeded")
	}
}
