package relay

import (
	"errors"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
)

func TestSourceAndOutputBuildEachBrokersAndRefuseTheOtherBrokersOptions(t *testing.T) {
	k, _ := broker.Parse("kafka://b1,b2:9093/orders")
	n, _ := broker.Parse("nats://n1/ORDERS/clean.orders")
	for _, c := range []struct {
		ep   broker.Endpoint
		name string
	}{{k, "kafka:orders"}, {n, "nats:ORDERS/clean.orders"}} {
		src, err := Source(c.ep, SourceOptions{})
		if err != nil || src.Name() != c.name {
			t.Errorf("Source(%s): %v, %v", c.ep, src, err)
		}
		out, err := Output(c.ep, OutputOptions{})
		if err != nil || out.Name() != c.name {
			t.Errorf("Output(%s): %v, %v", c.ep, out, err)
		}
	}
	if _, err := Source(n, SourceOptions{CommitGroup: "g"}); !errors.Is(err, ErrOption) {
		t.Errorf("a NATS source with a consumer group: %v", err)
	}
	if _, err := Output(n, OutputOptions{TransactionTimeout: time.Minute}); !errors.Is(err, ErrOption) {
		t.Errorf("a NATS output with a transaction timeout: %v", err)
	}
	if SinkID(k) != "orders" || SinkID(n) != "clean.orders" {
		t.Errorf("default sink ids %q, %q", SinkID(k), SinkID(n))
	}
}
