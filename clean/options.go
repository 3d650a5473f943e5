package clean

import "github.com/cdclog/cdclog/cdc"

// ErrNoQuarantine is Options.Validate's error (and so Stream's) when the
// policy is cdc.Quarantine and Options.Quarantine is nil. It matches
// cdc.ErrOption.
var ErrNoQuarantine error = &cdc.OptionError{Option: "--on-error",
	Reason: "quarantine needs --quarantine FILE (there is no database to keep rejected messages in)"}

// Validate reports options that Stream refuses, as a *cdc.OptionError: a
// policy that is none of cdc.Fail, cdc.Skip and cdc.Quarantine, policy
// cdc.Quarantine without a Quarantine to write to (ErrNoQuarantine), or a
// Quarantine under another policy, which would never be written.
func (o Options) Validate() error {
	return o.OnError.ValidateQuarantine(o.Quarantine != nil, ErrNoQuarantine)
}
