// Package integration holds cdclog's broker tests: Kafka against
// franz-go's in-process kfake cluster, NATS JetStream against an
// in-process nats-server cluster. It is a module of its own so that the
// main module neither depends on the servers nor runs these tests in its
// default `go test ./...`; .ci/run runs them with `cd integration && go
// test ./...`. Set CDCLOG_BROKER_SOAK=1 for the longer cases.
package integration
