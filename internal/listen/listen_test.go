package listen

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestResolveTakesAnAddressWithoutHostAsLoopback(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{":9464", "127.0.0.1:9464"},
		{"9464", "127.0.0.1:9464"},
		{"0.0.0.0:80", "0.0.0.0:80"},
		{"[::]:80", "[::]:80"},
		{"[::1]:80", "[::1]:80"},
		{"localhost:80", "localhost:80"},
		{":0", "127.0.0.1:0"},
		{":http", "127.0.0.1:http"},
	} {
		got, err := Resolve(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestResolveRefusesWhatIsNotAnAddress(t *testing.T) {
	for _, in := range []string{"", "host", "host:", "1:2:3", ":99999", ":nosuchservice"} {
		if got, err := Resolve(in); !errors.Is(err, ErrAddress) {
			t.Errorf("Resolve(%q) = %q, %v; want ErrAddress", in, got, err)
		}
	}
}

func TestWideIsEverythingButLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": false, "127.0.0.2:1": false, "[::1]:1": false, "localhost:1": false,
		"0.0.0.0:1": true, "[::]:1": true, "10.0.0.1:1": true, "example.com:1": true,
	} {
		if got := Wide(addr); got != want {
			t.Errorf("Wide(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestTCPNamesABusyPort(t *testing.T) {
	ln, err := TCP(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("listening on %s, want loopback", addr)
	}
	_, err = TCP(addr)
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("second listen on %s: %v; want address in use, naming it", addr, err)
	}
}
