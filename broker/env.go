package broker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// Env reads environment variables; nil means os.Getenv. Tests pass a map's
// lookup instead of changing the process's environment.
type Env func(string) string

// Get returns the variable's value.
func (e Env) Get(name string) string {
	if e == nil {
		return os.Getenv(name)
	}
	return e(name)
}

// Secret returns the value of NAME, or the contents of the file named by
// NAME_FILE (without a trailing line end) when NAME is unset. Giving both
// is an error: one would silently win.
func (e Env) Secret(name string) (string, error) {
	v, file := e.Get(name), e.Get(name+"_FILE")
	switch {
	case v != "" && file != "":
		return "", fmt.Errorf("both %s and %s_FILE are set", name, name)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s_FILE: %w", name, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return v, nil
}

// TLS builds a TLS configuration from PREFIX_TLS ("1" or "true" to use
// TLS with the system's roots), PREFIX_TLS_CA (a PEM file of roots),
// PREFIX_TLS_CERT and PREFIX_TLS_KEY (a client certificate and its key)
// and PREFIX_TLS_SERVER_NAME. Any of the files turns TLS on. It returns
// nil when TLS is off.
func (e Env) TLS(prefix string) (*tls.Config, error) {
	on := e.Get(prefix + "_TLS")
	ca, cert, key := e.Get(prefix+"_TLS_CA"), e.Get(prefix+"_TLS_CERT"), e.Get(prefix+"_TLS_KEY")
	server := e.Get(prefix + "_TLS_SERVER_NAME")
	switch on {
	case "", "0", "false":
		if ca == "" && cert == "" && key == "" {
			return nil, nil
		}
	case "1", "true":
	default:
		return nil, fmt.Errorf("%s_TLS=%q: want 1, true, 0 or false", prefix, on)
	}
	if on == "0" || on == "false" {
		return nil, fmt.Errorf("%s_TLS is off but TLS files are set", prefix)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: server}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s_TLS_CA: %w", prefix, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s_TLS_CA %s: no PEM certificate in it", prefix, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%s_TLS_CERT and %s_TLS_KEY go together", prefix, prefix)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s_TLS_CERT/%s_TLS_KEY: %w", prefix, prefix, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// credentialVars names the variables that carry a broker's credentials,
// for error messages.
func credentialVars(k Kind) string {
	if k == NATS {
		return "CDCLOG_NATS_CREDS, CDCLOG_NATS_USER/CDCLOG_NATS_PASSWORD or CDCLOG_NATS_TOKEN"
	}
	return "CDCLOG_KAFKA_SASL_MECHANISM, CDCLOG_KAFKA_SASL_USER, CDCLOG_KAFKA_SASL_PASSWORD"
}
