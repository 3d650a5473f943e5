package broker

import (
	"errors"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

func TestDecodeValueTakesOneOrSeveralMessages(t *testing.T) {
	u := cdc.NewUpdate([]byte(`"k"`), 3, 1)
	p := cdc.NewProgress(0, 4, cdc.Count{Time: 3, Count: 1})
	one := cdc.AppendJSON(nil, &u)
	lines := append(append(append(cdc.AppendJSON(nil, &u), "\n\r\n  \n"...), cdc.AppendJSON(nil, &p)...), '\n')
	mp, err := cdc.AppendMsgpack(nil, &u)
	if err == nil {
		mp, err = cdc.AppendMsgpack(mp, &p)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		f     cdc.Format
		value []byte
		kinds []cdc.Kind
	}{
		{"one JSON message without a line end", cdc.JSONL, one, []cdc.Kind{cdc.KindUpdate}},
		{"JSON lines with blank lines", cdc.JSONL, lines, []cdc.Kind{cdc.KindUpdate, cdc.KindProgress}},
		{"two msgpack messages", cdc.Msgpack, mp, []cdc.Kind{cdc.KindUpdate, cdc.KindProgress}},
		{"an empty value", cdc.JSONL, nil, nil},
	} {
		parts := DecodeValue(c.f, c.value, nil)
		if len(parts) != len(c.kinds) {
			t.Errorf("%s: %d parts, want %d", c.name, len(parts), len(c.kinds))
			continue
		}
		for i, p := range parts {
			if p.Reason != "" || p.Msg.Kind != c.kinds[i] {
				t.Errorf("%s: part %d = %v %q", c.name, i, p.Msg.Kind, p.Reason)
			}
		}
	}
}

func TestFillAppliesThePolicyAndMax(t *testing.T) {
	value := []byte("{\"update\":{\"data\":1,\"time\":1,\"diff\":1}}\nnot json\n{\"update\":{\"data\":2,\"time\":1,\"diff\":1}}")
	parts := DecodeValue(cdc.JSONL, value, nil)
	if len(parts) != 3 || parts[1].Reason == "" {
		t.Fatalf("parts %+v", parts)
	}
	pos := cdc.Pos{Source: "kafka:t/0", Offset: 41}

	b := &recovery.SourceBatch{Max: 10, Policy: cdc.Fail}
	n, err := Fill(b, parts, pos)
	var de *cdc.DecodeError
	if n != 1 || len(b.Msgs) != 1 || !errors.As(err, &de) || de.Pos != pos {
		t.Errorf("Fail: took %d, %d messages, err %v", n, len(b.Msgs), err)
	}

	b = &recovery.SourceBatch{Max: 10, Policy: cdc.Quarantine}
	n, err = Fill(b, parts, pos)
	if n != 3 || err != nil || len(b.Msgs) != 2 || len(b.Rejects) != 1 || string(b.Rejects[0].Raw) != "not json" {
		t.Errorf("Quarantine: took %d, err %v, batch %+v", n, err, b)
	}

	b = &recovery.SourceBatch{Max: 2, Policy: cdc.Skip}
	if n, err = Fill(b, parts, pos); n != 2 || err != nil || b.Len() != 2 {
		t.Errorf("Max 2: took %d, err %v, len %d", n, err, b.Len())
	}
}
