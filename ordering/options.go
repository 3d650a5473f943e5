package ordering

import "github.com/cdclog/cdclog/cdc"

// ErrNoQuarantine is MergeOptions.Validate's error (and so MergeJSONL's)
// when the policy is cdc.Quarantine and MergeOptions.Quarantine is nil. It
// matches cdc.ErrOption.
var ErrNoQuarantine error = &cdc.OptionError{Option: "--on-error",
	Reason: "quarantine needs --quarantine FILE: merge has no database to keep rejected lines in"}

// Validate reports options that MergeJSONL refuses, as a *cdc.OptionError:
// a policy that is none of cdc.Fail, cdc.Skip and cdc.Quarantine, policy
// cdc.Quarantine without a Quarantine to write to (ErrNoQuarantine), or a
// Quarantine under another policy, which would never be written.
func (o MergeOptions) Validate() error {
	return o.OnError.ValidateQuarantine(o.Quarantine != nil, ErrNoQuarantine)
}

// checkShardNames refuses a list of shard names that names stdin ("-")
// more than once: two shards cannot both read it.
func checkShardNames(names []string) error {
	stdin := 0
	for _, name := range names {
		if name == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return &cdc.OptionError{Option: `"-" (stdin)`, Reason: "can be only one of the shards"}
	}
	return nil
}
