// Package listen opens the TCP listeners of cdclog's HTTP endpoints
// (serve --listen, ingest --metrics) under one address rule: an address
// without a host (":PORT", or "PORT") means the loopback interface,
// 127.0.0.1, so that nothing is reachable from other machines unless the
// command line names a wider address ("0.0.0.0:PORT", "[::]:PORT", a
// host name or an interface's address). This differs from Go's net.Listen,
// for which ":PORT" is every interface: the endpoints have no
// authentication, and a wide address should be a decision.
package listen

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Loopback is the host an address without one gets.
const Loopback = "127.0.0.1"

// ErrAddress is wrapped by the error for an address that is not HOST:PORT,
// :PORT or PORT (a usage error, not a runtime one).
var ErrAddress = errors.New("not an address (want HOST:PORT, :PORT or PORT)")

// Resolve returns addr with the rule applied: "HOST:PORT" as it is,
// ":PORT" and "PORT" on Loopback.
func Resolve(addr string) (string, error) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort(Loopback, addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("%q: %w", addr, ErrAddress)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		if _, lerr := net.LookupPort("tcp", port); lerr != nil {
			return "", fmt.Errorf("%q: port %q: %w", addr, port, ErrAddress)
		}
	}
	if host == "" {
		host = Loopback
	}
	return net.JoinHostPort(host, port), nil
}

// TCP listens on addr after Resolve. A port in use is an error that says
// so, naming the address.
func TCP(addr string) (net.Listener, error) {
	a, err := Resolve(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", a, err)
	}
	return ln, nil
}

// Wide reports whether a resolved address listens beyond the loopback
// interface: its host is not a loopback address nor "localhost".
func Wide(resolved string) bool {
	host, _, err := net.SplitHostPort(resolved)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
