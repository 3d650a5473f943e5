package proctest

import (
	"runtime"
	"testing"
)

func TestStatusFieldReadsTheNamedFigure(t *testing.T) {
	status := []byte("Name:\tx\nRssAnon:\t 1200 kB\nRssFile:\t   345 kB\nRssShmem:\t0 kB\n")
	tests := []struct {
		name   string
		status []byte
		want   int
		ok     bool
		err    bool
	}{
		{"RssFile:", status, 345, true, false},
		{"RssAnon:", status, 1200, true, false},
		{"VmSwap:", status, 0, false, false},
		{"RssFile:", []byte("RssFile:\n"), 0, true, true},
		{"RssFile:", []byte("RssFile:\tmany kB\n"), 0, true, true},
	}
	for _, tt := range tests {
		n, ok, err := statusField(tt.status, tt.name)
		if n != tt.want || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("statusField(%q, %q) = %d, %v, %v; want %d, %v, error %v", tt.status, tt.name, n, ok, err, tt.want, tt.ok, tt.err)
		}
	}
}

func TestRssFileKiBReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RssFile is Linux's")
	}
	if n := RssFileKiB(t); n <= 0 {
		t.Fatalf("RssFileKiB = %d: the test binary's own text is file-backed and resident", n)
	}
}
