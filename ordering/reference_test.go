package ordering

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// mergeJSONLReference is MergeJSONL as it was before the fast path: one
// goroutine, a JSONLReader per shard (encoding/json's validation, then
// RecordKey), Merge over them, a bufio.Writer. It is the model the fast
// path is tested against: same output, same stats, same errors, same logs
// and quarantine, on any input.
func mergeJSONLReference(ctx context.Context, shards []Shard, w io.Writer, opts MergeOptions) (MergeStats, error) {
	if err := opts.Validate(); err != nil {
		return MergeStats{Shards: len(shards)}, err
	}
	rep := newReport(shards, opts)
	if err := ctx.Err(); err != nil {
		return rep.stats, err
	}
	out := bufio.NewWriterSize(w, 256<<10)
	readers := make([]*JSONLReader, len(shards))
	sources := make([]Source[[]byte], len(shards))
	for i, s := range shards {
		readers[i] = NewJSONLReader(s.R, s.Name)
		readers[i].slowKeys = true
		sources[i] = &referenceSource{rep: &rep, r: readers[i]}
	}
	err := Merge(sources, func(_ int, it Item[[]byte]) error {
		out.Write(it.Record)
		if err := out.WriteByte('\n'); err != nil {
			return &WriteError{Err: err}
		}
		return rep.written(ctx)
	}, func(i int, key Key) { rep.disorder(i, readers[i].Line(), key) })
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = &WriteError{Err: ferr}
	}
	return rep.stats, err
}

// referenceSource is a JSONLReader with the merge's policy applied to the
// lines it rejects.
type referenceSource struct {
	rep *report
	r   *JSONLReader
}

func (s *referenceSource) Next() (Key, []byte, error) {
	for {
		k, rec, err := s.r.Next()
		var le *LineError
		if !errors.As(err, &le) {
			return k, rec, err
		}
		if err := s.rep.reject(le); err != nil {
			return k, nil, err
		}
	}
}
