package relay

import (
	"fmt"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// OutputSpec is a broker output named by a URL, ready to receive a
// processor's output log (`cdclog ingest --to`, `cdclog publish --to`):
// what ParseOutput returns.
type OutputSpec struct {
	// Endpoint is the parsed URL.
	Endpoint broker.Endpoint
	// Output is the output, not yet connected.
	Output broker.Output
	// Sink is what NewSink gets: the endpoint's Name, the sink id in
	// effect (OutputOptions.SinkID, or SinkID(Endpoint)) and the
	// forwarder's options.
	Sink SinkOptions
}

// ParseOutput parses url, kafka://BROKERS/TOPIC or
// nats://SERVERS/STREAM[/SUBJECT], into the output it names with o, and
// the options of a Sink forwarding to it with f. It connects to nothing,
// so each of its errors refuses url or o: a *cdc.OptionError for a url
// that is no broker URL (a file name, say), broker.Parse's error for a
// malformed one, and an error wrapping ErrOption for an option the
// broker does not take.
func ParseOutput(url string, o OutputOptions, f broker.ForwarderOptions) (*OutputSpec, error) {
	if !broker.IsURL(url) {
		return nil, &cdc.OptionError{Option: "--to", Reason: fmt.Sprintf(
			"takes kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT], not %q (write a file with --out FILE)", url)}
	}
	ep, err := broker.Parse(url)
	if err != nil {
		return nil, err
	}
	out, err := Output(ep, o)
	if err != nil {
		return nil, err
	}
	id := o.SinkID
	if id == "" {
		id = SinkID(ep)
	}
	return &OutputSpec{Endpoint: ep, Output: out, Sink: SinkOptions{Name: ep.Name(), SinkID: id, Forwarder: f}}, nil
}

// NewSink returns a Sink of p's output log to the spec's output, not yet
// running; a Sink runs once, so each Run or Publish takes a new one.
func (s *OutputSpec) NewSink(p *recovery.Processor) *Sink {
	return NewSink(p, s.Output, s.Sink)
}
