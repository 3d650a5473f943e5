package demangle

import (
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func TestRejectOfGivesTheErrorTextWithoutItsPosition(t *testing.T) {
	r := New(0)
	first, second := cdc.Pos{Source: "in", Line: 1}, cdc.Pos{Source: "in", Line: 2}
	a, b := upd(`"k"`, 3, 1), upd(`"k"`, 3, 2)
	if _, _, err := r.Push(nil, &a, first); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.Push(nil, &b, second)
	if err == nil {
		t.Fatal("conflicting diff accepted")
	}
	rj := RejectOf(&b, second, err)
	if rj.String() != err.Error() {
		t.Errorf("reject reads %q, error %q: one text per error", rj.String(), err.Error())
	}
	if strings.HasPrefix(rj.Reason, "in:2") || !strings.Contains(rj.Reason, "conflicting-diff") || !strings.Contains(rj.Reason, "in:1") {
		t.Errorf("reason %q: want the kind and the earlier position, not the offending one", rj.Reason)
	}
	if string(rj.Raw) != string(cdc.AppendJSON(nil, &b)) {
		t.Errorf("raw %q", rj.Raw)
	}

	bad := cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte("1"), Time: 1}} // zero diff
	_, _, err = r.Push(nil, &bad, second)
	if rj := RejectOf(&bad, second, err); rj.String() != err.Error() || strings.HasPrefix(rj.Reason, "in:2") {
		t.Errorf("invalid message: reject %q, error %q", rj.String(), err.Error())
	}
}
