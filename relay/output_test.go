package relay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
)

func TestParseOutputNamesTheSinkAndRefusesWhatCannotWork(t *testing.T) {
	fwd := broker.ForwarderOptions{Format: cdc.Msgpack, Takeover: true}
	for _, tc := range []struct {
		name, url  string
		o          OutputOptions
		wantName   string
		wantSinkID string
		wantErr    error  // matched with errors.Is; nil: no error unless says is set
		says       string // in the error
	}{
		{"kafka, default sink id", "kafka://b1,b2:9093/orders", OutputOptions{}, "kafka:orders", "orders", nil, ""},
		{"kafka, given sink id and transaction timeout", "kafka://b/orders", OutputOptions{SinkID: "w1", TransactionTimeout: time.Minute}, "kafka:orders", "w1", nil, ""},
		{"nats with a subject", "nats://n1/ORDERS/clean.orders", OutputOptions{}, "nats:ORDERS/clean.orders", "clean.orders", nil, ""},
		{"nats without a subject", "nats://n1/ORDERS", OutputOptions{}, "nats:ORDERS", "", nil, ""},
		{"a file name", "out.jsonl", OutputOptions{}, "", "", cdc.ErrOption,
			`--to takes kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT], not "out.jsonl" (write a file with --out FILE)`},
		{"a malformed URL", "kafka://b", OutputOptions{}, "", "", nil, `broker URL "kafka://b"`},
		{"a transaction timeout for nats", "nats://n/S/s", OutputOptions{TransactionTimeout: time.Minute}, "", "", ErrOption, "--transaction-timeout"},
		{"a nats subject with a '*' wildcard", "nats://n/S/clean.*", OutputOptions{}, "", "", cdc.ErrOption, `--to nats:S/clean.*: cannot publish to a subject with wildcards`},
		{"a nats subject with a '>' wildcard", "nats://n/S/>", OutputOptions{}, "", "", cdc.ErrOption, "cannot publish to a subject with wildcards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := ParseOutput(tc.url, tc.o, fwd)
			if tc.wantErr != nil || tc.says != "" {
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("ParseOutput(%q): %v, want an error (%v) saying %q", tc.url, err, tc.wantErr, tc.says)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseOutput(%q): %v", tc.url, err)
			}
			if spec.Output == nil || spec.Sink.Name != tc.wantName || spec.Sink.SinkID != tc.wantSinkID {
				t.Errorf("output %v, name %q, sink id %q; want %q, %q", spec.Output, spec.Sink.Name, spec.Sink.SinkID, tc.wantName, tc.wantSinkID)
			}
			if spec.Sink.Forwarder != fwd || spec.Endpoint.Name() != tc.wantName {
				t.Errorf("forwarder options %+v, endpoint %v", spec.Sink.Forwarder, spec.Endpoint)
			}
		})
	}
}
