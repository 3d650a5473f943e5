package cdc

import "testing"

func TestPosStringNamesTheUnitOfItsSource(t *testing.T) {
	tests := []struct {
		pos  Pos
		want string
	}{
		{Pos{Source: "in.jsonl", Line: 3, Offset: 120}, "in.jsonl:3"},
		{Pos{Source: "in.mp", Offset: 120}, "in.mp: byte 120"},
		{Pos{Offset: 7}, "input: byte 7"},
		{Pos{Source: "kafka:orders/2", Offset: 10}, "kafka:orders/2: offset 10"},
		{Pos{Source: "nats:IN/in.s", Offset: 10}, "nats:IN/in.s: sequence 10"},
		{Pos{Source: "nats:IN", Offset: 10, Line: 2}, "nats:IN:2"},
	}
	for _, tt := range tests {
		if got := tt.pos.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.pos, got, tt.want)
		}
	}
}
