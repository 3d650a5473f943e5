package streamgen

import (
	"math"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// Shift moves every time in m up by off, for a stream moved towards the
// end of the time range (tests of the last times). An upper bound that
// would pass the last time, math.MaxUint64, becomes unbounded: it is the
// end of the range. It reports false for a statement that would start
// past the last time: it covers nothing, and is to be dropped. A
// statement's counts are copied before they are moved.
func Shift(m *cdc.Message, off uint64) bool {
	switch m.Kind {
	case cdc.KindUpdate:
		m.Update.Time += off
	case cdc.KindProgress:
		p := &m.Progress
		if p.Lower > math.MaxUint64-off {
			return false
		}
		p.Lower += off
		switch {
		case p.Unbounded:
		case p.Upper-1 >= math.MaxUint64-off:
			p.Unbounded, p.Upper = true, 0
		default:
			p.Upper += off
		}
		p.Counts = slices.Clone(p.Counts)
		for i := range p.Counts {
			p.Counts[i].Time += off
		}
	}
	return true
}
