package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cdclog/cdclog/broker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The headers of nats-server's atomic batch publish (ADR-50, nats-server
// 2.12): every message of a batch carries its id and its position in it
// from 1, and the last one the commit. nats.go's jetstream package has
// only the stream's AllowAtomicPublish, not a batch publisher.
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// The error codes of atomic batch publish that the session tells apart
// (nats-server's jetstream_errors_generated.go).
const (
	errCodeAtomicDisabled  jetstream.ErrorCode = 10174
	errCodeBatchIncomplete jetstream.ErrorCode = 10176
	errCodeBatchTooLarge   jetstream.ErrorCode = 10199
	errCodeBatchDuplicate  jetstream.ErrorCode = 10201
)

// batchAck is the answer to a batch's commit: the stream sequence of its
// last message, its id and how many messages it stored; or an error.
type batchAck struct {
	Error  *jetstream.APIError `json:"error,omitempty"`
	Stream string              `json:"stream"`
	Seq    uint64              `json:"seq"`
	Batch  string              `json:"batch"`
	Count  int                 `json:"count"`
}

// split cuts recs into batches of at most maxMessages records and, unless
// one record alone is larger, maxBytes bytes of values, as even in size
// as the bounds allow: 4,096 records go as five batches of about 820
// rather than four of 1,000 and one of 96.
func split(recs []broker.Outgoing, maxMessages, maxBytes int) [][]broker.Outgoing {
	if len(recs) == 0 {
		return nil
	}
	n := (len(recs) + maxMessages - 1) / maxMessages
	per := (len(recs) + n - 1) / n
	var out [][]broker.Outgoing
	start, bytes := 0, 0
	for i, r := range recs {
		if i > start && (i-start >= per || bytes+len(r.Value) > maxBytes) {
			out = append(out, recs[start:i])
			start, bytes = i, 0
		}
		bytes += len(r.Value)
	}
	return append(out, recs[start:])
}

// commit publishes recs as one atomic batch and waits for the commit's
// acknowledgement. Only the commit is a request: the server answers it
// with the error of any message of the batch, and refuses a batch it
// received with a gap (a message lost with a connection) as incomplete.
func (s *session) commit(ctx context.Context, recs []broker.Outgoing) error {
	id := batchID()
	what := fmt.Sprintf("%s: batch of records %d to %d", s.o.Name(), recs[0].Seq, recs[len(recs)-1].Seq)
	m, err := s.stage(recs, id)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	actx, cancel := context.WithTimeout(ctx, s.o.o.AckTimeout)
	defer cancel()
	resp, err := s.nc.RequestMsgWithContext(actx, m)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%s: no leader of stream %s answered the commit: %w", what, s.o.o.Stream, err)
	case err != nil && ctx.Err() == nil && actx.Err() != nil:
		return fmt.Errorf("%s: no acknowledgement of the commit within %v: the batch is on the stream whole or not at all, and the next session reads back which", what, s.o.o.AckTimeout)
	case err != nil:
		return fmt.Errorf("%s: commit: %w", what, err)
	}
	var ack batchAck
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return fmt.Errorf("%s: the commit's acknowledgement is not JSON: %w", what, err)
	}
	if ack.Error != nil {
		return s.refused(what, len(recs), ack.Error)
	}
	if ack.Stream != s.o.o.Stream {
		return fmt.Errorf("%w: %s: stored by stream %s", broker.ErrOutputConfig, what, ack.Stream)
	}
	if ack.Batch != id || ack.Count != len(recs) || ack.Seq == 0 {
		return fmt.Errorf("%s: the commit's acknowledgement is for batch %q of %d messages at sequence %d, not %q of %d", what, ack.Batch, ack.Count, ack.Seq, id, len(recs))
	}
	s.last = ack.Seq
	return nil
}

// stage publishes all but the last of recs as messages of batch id, the
// first expecting the subject's last sequence as known, and returns the
// last one as the batch's commit, not yet sent.
func (s *session) stage(recs []broker.Outgoing, id string) (*nats.Msg, error) {
	for i, r := range recs {
		m := s.message(r)
		m.Header.Set(batchIDHeader, id)
		m.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
		if i == 0 {
			// The server takes the expected sequence only on the first
			// message for a subject in a batch; it holds for the batch.
			m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.last, 10))
		}
		last := i == len(recs)-1
		if last {
			m.Header.Set(batchCommitHeader, "1")
		}
		if err := s.fits(m, r); err != nil {
			return nil, err
		}
		if last {
			return m, nil
		}
		if err := s.nc.PublishMsg(m); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("an empty batch")
}

// refused explains a batch the stream refused whole. Every refusal ends
// the session: the Forwarder's next one reads back where the subject
// stands.
func (s *session) refused(what string, n int, api *jetstream.APIError) error {
	switch api.ErrorCode {
	case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant:
		return fmt.Errorf("%s: refused, nothing of it stored: %w: %w", what, ErrWrongLast, api)
	case errCodeBatchTooLarge:
		lower := int64(batchLimit(api.Description, n))
		if s.o.maxMessages.Load() > lower {
			s.o.maxMessages.Store(lower)
			s.o.o.logger().Warn("jetstream output: the servers' max_batch_size is lower than the batch sent; sending smaller batches", "stream", s.o.o.Stream, "refused", n, "batch_messages", lower)
		}
		return fmt.Errorf("%s: refused as too large (%d messages), nothing of it stored: %w", what, n, api)
	case errCodeAtomicDisabled:
		return fmt.Errorf("%s: refused, the stream no longer allows atomic publish (the next session publishes one record at a time): %w", what, api)
	case errCodeBatchDuplicate:
		return fmt.Errorf("%s: refused, nothing of it stored: a Nats-Msg-Id of it is already in the stream's duplicate window: %w", what, api)
	case errCodeBatchIncomplete:
		return fmt.Errorf("%s: refused as incomplete (a message was lost, the leader changed or the batch timed out), nothing of it stored: %w", what, api)
	}
	return fmt.Errorf("%s: refused, nothing of it stored: %w", what, api)
}

// batchLimit returns the batch size to use after a batch of n messages
// was refused as too large: the server's limit where its description ends
// with it ("atomic publish batch is too large: 100"), else half of n.
func batchLimit(description string, n int) int {
	if i := strings.LastIndexByte(description, ' '); i >= 0 {
		if limit, err := strconv.Atoi(description[i+1:]); err == nil && limit > 0 && limit < n {
			return limit
		}
	}
	return max(1, n/2)
}

// batchID returns a new batch id: random, so that a batch abandoned by a
// killed writer never shares its id with a later one (the server keeps an
// abandoned batch for its batch timeout, 10 s by default).
func batchID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
