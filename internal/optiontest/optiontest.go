// Package optiontest checks, in tests, what the library's Validate
// methods say of an options value: the one shape every package's table
// of valid and refused options shares.
package optiontest

import (
	"errors"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// Check fails t (Fatalf) unless err is what want says: nil when want is
// "", otherwise an error that matches cdc.ErrOption and reads want. It
// reports whether err was a refusal, so that the test goes on to check
// that the entry point refuses the same options.
func Check(t testing.TB, err error, want string) (refused bool) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("Validate() = %v, want nil", err)
		}
		return false
	}
	if !errors.Is(err, cdc.ErrOption) || err.Error() != want {
		t.Fatalf("Validate() = %v, want %q matching cdc.ErrOption", err, want)
	}
	return true
}
