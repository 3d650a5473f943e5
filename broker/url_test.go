package broker

import (
	"strings"
	"testing"
)

func TestParseAcceptsKafkaAndNATSURLs(t *testing.T) {
	for _, c := range []struct {
		in, str, name string
		servers       []string
	}{
		{"kafka://b1:9092,b2:9093/cdc-orders", "kafka://b1:9092,b2:9093/cdc-orders", "kafka:cdc-orders", []string{"b1:9092", "b2:9093"}},
		{"kafka://b1/t.x_y", "kafka://b1:9092/t.x_y", "kafka:t.x_y", []string{"b1:9092"}},
		{"kafka://[::1]:19092/t", "kafka://[::1]:19092/t", "kafka:t", []string{"[::1]:19092"}},
		{"kafka://[::1]/t", "kafka://[::1]:9092/t", "kafka:t", []string{"[::1]:9092"}},
		{"nats://n1:4222,n2/ORDERS", "nats://n1:4222,n2:4222/ORDERS", "nats:ORDERS", []string{"n1:4222", "n2:4222"}},
		{"nats://n1/CLEAN/clean.orders", "nats://n1:4222/CLEAN/clean.orders", "nats:CLEAN/clean.orders", []string{"n1:4222"}},
		{"nats://n1/IN/cdc.*.x.>", "nats://n1:4222/IN/cdc.*.x.>", "nats:IN/cdc.*.x.>", []string{"n1:4222"}},
	} {
		e, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if e.String() != c.str || e.Name() != c.name || strings.Join(e.Servers, " ") != strings.Join(c.servers, " ") {
			t.Errorf("Parse(%q) = %q name %q servers %q; want %q, %q, %q", c.in, e.String(), e.Name(), e.Servers, c.str, c.name, c.servers)
		}
		if !IsURL(c.in) {
			t.Errorf("IsURL(%q) = false", c.in)
		}
	}
}

func TestParseRefusesBadURLsSayingWhy(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"orders.jsonl", "want kafka://"},
		{"http://x/y", `unknown scheme "http"`},
		{"kafka:///t", "no kafka servers"},
		{"kafka://b1:9092", "no topic"},
		{"kafka://b1:9092/", "no topic"},
		{"kafka://b1:9092/a/b", "only letters"},
		{"kafka://b1:99999/t", "bad server"},
		{"kafka://b1:x/t", "bad server"},
		{"kafka://b1,,b2/t", "empty server"},
		{"kafka://user:secret@b1/t", "credentials do not belong in a URL"},
		{"kafka://b1/t?acks=all", "query strings"},
		{"nats://n1", "no stream"},
		{"nats://n1/A.B", "stream \"A.B\""},
		{"nats://n1/S/a..b", "empty token"},
		{"nats://n1/S/a.>.b", "'>' must be the last"},
		{"nats://n1/S/a*", "whole tokens"},
		{"nats://tok@n1/S", "CDCLOG_NATS_CREDS"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.in) {
			t.Errorf("Parse(%q) = %v; want an error quoting the URL and saying %q", c.in, err, c.want)
		}
	}
	if IsURL("orders.jsonl") || IsURL("/tmp/kafka://x") {
		t.Error("IsURL took a file name for a URL")
	}
}

func TestLiteralSubjects(t *testing.T) {
	for s, want := range map[string]bool{"a.b": true, "a.*": false, ">": false, "a.b>": true} {
		if Literal(s) != want {
			t.Errorf("Literal(%q) = %v", s, !want)
		}
	}
}

func TestSecretsComeFromTheVariableOrItsFile(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/pw"
	if err := writeFile(file, "s3cret\n"); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) Env { return func(k string) string { return m[k] } }
	if v, err := env(map[string]string{"X": "a"}).Secret("X"); v != "a" || err != nil {
		t.Errorf("from variable: %q, %v", v, err)
	}
	if v, err := env(map[string]string{"X_FILE": file}).Secret("X"); v != "s3cret" || err != nil {
		t.Errorf("from file: %q, %v", v, err)
	}
	if _, err := env(map[string]string{"X": "a", "X_FILE": file}).Secret("X"); err == nil {
		t.Error("both set: no error")
	}
	if c, err := env(nil).TLS("P"); c != nil || err != nil {
		t.Errorf("no TLS variables: %v, %v", c, err)
	}
	if c, err := env(map[string]string{"P_TLS": "1"}).TLS("P"); c == nil || err != nil {
		t.Errorf("P_TLS=1: %v, %v", c, err)
	}
	if _, err := env(map[string]string{"P_TLS_CA": file}).TLS("P"); err == nil || !strings.Contains(err.Error(), "no PEM") {
		t.Errorf("a CA file without PEM: %v", err)
	}
}
