package recovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

func TestAppendStoresDataInItsCanonicalEncoding(t *testing.T) {
	type row struct {
		Name string `json:"name"`
		ID   int    `json:"id"`
	}
	marshalled, err := json.Marshal(row{Name: "<b>", ID: 7}) // keys out of order, HTML escapes
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"id":7,"name":"<b>"}`
	spellings := [][]byte{marshalled, []byte(` {"name" : "<b>",  "id":7} `), []byte(canonical)}
	path := dbPath(t)
	p := openTest(t, path, Options{})
	var msgs []cdc.Message
	for _, d := range spellings {
		msgs = append(msgs, cdc.NewUpdate(d, 0, 1))
	}
	msgs = append(msgs, cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}))
	res, err := p.Append(context.Background(), msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 2 || res.Duplicates != 2 {
		t.Fatalf("three spellings of one value: %+v, want 1 update and 2 duplicates accepted with the progress", res)
	}
	if !bytes.Equal(msgs[0].Update.Data, marshalled) {
		t.Fatalf("Append modified the caller's message: %s", msgs[0].Update.Data)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The database reopens (it refused to as corrupt when raw data was
	// stored) and holds the canonical encoding.
	p = openTest(t, path, Options{})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"update":{"data":` + canonical + `,"time":0,"diff":1}}` + "\n" +
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n"
	if got := storedOutput(t, path); string(got) != want {
		t.Fatalf("stored output:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendRefusesInvalidDataBeforeApplyingAnything(t *testing.T) {
	for _, pol := range []cdc.ErrorPolicy{cdc.Fail, cdc.Skip, cdc.Quarantine} {
		t.Run(pol.String(), func(t *testing.T) {
			path := dbPath(t)
			p := openTest(t, path, Options{OnError: pol})
			defer p.Close()
			msgs := []cdc.Message{
				cdc.NewUpdate([]byte(`"a"`), 0, 1),
				cdc.NewUpdate([]byte(`{"a":1,"a":2}`), 0, 1), // duplicate key
				cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 2}),
			}
			for _, bad := range [][]byte{[]byte(`{"a":1,"a":2}`), []byte(`{"a":`), []byte("\"\xff\""), nil} {
				msgs[1].Update.Data = bad
				res, err := p.Append(context.Background(), msgs, nil)
				if !errors.Is(err, ErrInvalidData) || !errors.Is(err, demangle.ErrInvalid) {
					t.Fatalf("data %q: got %+v, %v; want ErrInvalidData", bad, res, err)
				}
			}
			// The error names the message: by its position when given.
			_, err := p.Append(context.Background(), msgs, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "message 2 (") {
				t.Fatalf("without positions: %v; want it to name message 2", err)
			}
			pos := []cdc.Pos{{Source: "a", Line: 1}, {Source: "a", Line: 2}, {Source: "a", Line: 3}}
			_, err = p.Append(context.Background(), msgs, pos)
			if err == nil || !strings.HasPrefix(err.Error(), "a:2 (") {
				t.Fatalf("with positions: %v; want it to name a:2", err)
			}
			st, err := p.Status()
			if err != nil {
				t.Fatal(err)
			}
			if st.WAL.Entries != 0 || st.Skipped != 0 || st.Quarantined != 0 {
				t.Fatalf("a refused request left a trace: %+v", st)
			}
		})
	}
}
