package server

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
)

// Validate reports options that New refuses, as a *cdc.OptionError: a
// negative MaxBody or MaxInFlight, or a MaxInFlight below the MaxBody in
// effect (DefaultMaxBody when MaxBody is zero), which no body could fit.
func (o Options) Validate() error {
	body := o.MaxBody
	switch {
	case body < 0:
		return &cdc.OptionError{Option: "--max-body", Reason: fmt.Sprintf("%s: an append could hold no message", size(body))}
	case body == 0:
		body = DefaultMaxBody
	}
	switch {
	case o.MaxInFlight < 0:
		return &cdc.OptionError{Option: "--max-inflight", Reason: fmt.Sprintf("%s: no body could be held", size(o.MaxInFlight))}
	case o.MaxInFlight > 0 && o.MaxInFlight < body:
		return &cdc.OptionError{Option: "--max-inflight",
			Reason: fmt.Sprintf("%s is less than --max-body %s: no body could be held", size(o.MaxInFlight), size(body))}
	}
	return nil
}

// size writes n bytes the way --max-body takes them: in the largest IEC
// unit that divides it exactly (KiB, MiB, GiB, TiB), else in bytes.
func size(n int64) string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		f := int64(1) << (10 * (len(units) - i))
		if n != 0 && n%f == 0 {
			return fmt.Sprintf("%d%s", n/f, u)
		}
	}
	return fmt.Sprint(n)
}
