// Package relay runs cdclog's broker pipeline around one
// recovery.Processor: the part of `cdclog ingest --from URL --to URL` and
// `cdclog publish` that is more than flags, so that a Go service can run it
// too. docs/brokers.md is the operator's guide; package broker has the
// model (sources, outputs, the Forwarder).
//
// # Inputs
//
// Source and Output build a broker source (recovery.Source) and output
// (broker.Output) from a parsed URL (broker.Endpoint). ParseInputs and
// InputList.Open turn a list of input names, as ingest takes them (file
// paths, "-" for stdin, broker URLs), into Run's inputs, refusing an input
// given twice. Run reads its
// InTurn inputs one after the other, each to its end (files, stdin), then
// its Endless ones (broker inputs, a followed file) concurrently, each by
// its own Processor.Ingest, until the context ends or one of them fails,
// which stops the others. Concurrent Ingests of one Processor share its
// group commits and its one receiver: every input feeds the one CDC
// collection of the database. Each input commits its own cursor, so two
// inputs must have different names (two URLs of one topic are one input).
//
// # The sink
//
// A Sink runs a broker.Forwarder beside the inputs from the start, so
// that the output of the InTurn inputs is forwarded while they are read.
// When the inputs end, Run waits for the output to hold every committed
// record; when they stop (the context ended, or an input failed), it waits
// at most DrainTimeout, and records committed but not yet on the output
// stay in the database, for the next run or `cdclog publish`. A forwarder
// that stops by itself (fenced by another writer, an output that is not
// this database's) stops the inputs, and Run returns its error.
// MaxSinkLag applies backpressure (broker.Throttle) to every input.
// ParseOutput turns an output URL, as ingest --to and publish --to take
// it, into an OutputSpec whose NewSink makes the Sink; Publish drains one
// without inputs. Run's Result and Publish's PublishResult say what was
// read, committed and forwarded (their LogAttrs are the commands'
// summary fields).
//
// # What is recorded
//
// Besides the inputs' own cursors, Run records, as producer cursors
// committed with the database's other state (at most every RecordEvery,
// when they changed, and when it returns):
//
//	sink:OUTPUT  the last record known to be on the output, and the sink id
//	end:INPUT    each partition's log end as the running source last saw it
//
// so that `cdclog inspect status` can show the sink's lag and the inputs'
// lag offline, without contacting a broker (Describe decodes them). They
// are for people and monitoring only: the forwarder always reads the output
// back, and a source never reads its log end from the database.
package relay
