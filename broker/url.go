package broker

import (
	"fmt"
	"net"
	"strings"
)

// Kind says which broker an Endpoint names.
type Kind uint8

// The brokers cdclog reads from and writes to. The zero Kind is invalid.
const (
	Kafka Kind = iota + 1
	NATS
)

// String returns the URL scheme: "kafka" or "nats".
func (k Kind) String() string {
	switch k {
	case Kafka:
		return "kafka"
	case NATS:
		return "nats"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Default ports, used when a server is given without one.
const (
	DefaultKafkaPort = "9092"
	DefaultNATSPort  = "4222"
)

// Endpoint is a parsed broker URL:
//
//	kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC
//	nats://HOST[:PORT][,HOST[:PORT]...]/STREAM[/SUBJECT]
//
// A URL carries no secrets: user names, passwords, tokens and key files
// come from the environment (see the package documentation), so that they
// never show in a process listing.
type Endpoint struct {
	Kind Kind
	// Servers are the seed brokers or servers, each HOST:PORT.
	Servers []string
	// Topic is the Kafka topic.
	Topic string
	// Stream is the JetStream stream; Subject, optional, is the subject
	// within it: a filter for a source, the subject published to for a
	// sink.
	Stream, Subject string
}

// IsURL reports whether s names a broker rather than a file: it starts
// with "kafka://" or "nats://".
func IsURL(s string) bool {
	return strings.HasPrefix(s, "kafka://") || strings.HasPrefix(s, "nats://")
}

// Parse parses a broker URL. Its errors quote the URL and say what is
// wrong.
func Parse(s string) (Endpoint, error) {
	var e Endpoint
	scheme, rest, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		return e, urlError(s, "want kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT]")
	case scheme == "kafka":
		e.Kind = Kafka
	case scheme == "nats":
		e.Kind = NATS
	default:
		return e, urlError(s, fmt.Sprintf("unknown scheme %q (want kafka or nats)", scheme))
	}
	if strings.ContainsAny(rest, "?#") {
		return e, urlError(s, "query strings and fragments are not accepted; options are flags")
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if strings.Contains(hosts, "@") {
		return e, urlError(s, fmt.Sprintf("credentials do not belong in a URL (they show in ps); set them in the environment (%s)", credentialVars(e.Kind)))
	}
	servers, err := parseServers(hosts, e.Kind)
	if err != nil {
		return e, urlError(s, err.Error())
	}
	e.Servers = servers
	switch e.Kind {
	case Kafka:
		if err := checkTopic(path); err != nil {
			return e, urlError(s, err.Error())
		}
		e.Topic = path
	case NATS:
		stream, subject, _ := strings.Cut(path, "/")
		if err := checkStream(stream); err != nil {
			return e, urlError(s, err.Error())
		}
		if subject != "" {
			if err := checkSubject(subject); err != nil {
				return e, urlError(s, err.Error())
			}
		}
		e.Stream, e.Subject = stream, subject
	}
	return e, nil
}

// String returns the URL.
func (e Endpoint) String() string {
	s := e.Kind.String() + "://" + strings.Join(e.Servers, ",") + "/"
	if e.Kind == Kafka {
		return s + e.Topic
	}
	if e.Subject != "" {
		return s + e.Stream + "/" + e.Subject
	}
	return s + e.Stream
}

// Name names the input or output independently of the servers, which may
// change between runs: "kafka:TOPIC", "nats:STREAM" or
// "nats:STREAM/SUBJECT". A source commits its cursor under it.
func (e Endpoint) Name() string {
	switch {
	case e.Kind == Kafka:
		return "kafka:" + e.Topic
	case e.Subject != "":
		return "nats:" + e.Stream + "/" + e.Subject
	}
	return "nats:" + e.Stream
}

func urlError(s, why string) error { return fmt.Errorf("broker URL %q: %s", s, why) }

func parseServers(hosts string, k Kind) ([]string, error) {
	if hosts == "" {
		return nil, fmt.Errorf("no %s servers before the path", k)
	}
	port := DefaultKafkaPort
	if k == NATS {
		port = DefaultNATSPort
	}
	var out []string
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return nil, fmt.Errorf("empty server in %q", hosts)
		}
		host, p, err := net.SplitHostPort(h)
		if err != nil {
			// No port: "b1" or "[::1]".
			host, p = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), port
			if strings.ContainsAny(host, "[]") {
				return nil, fmt.Errorf("bad server %q", h)
			}
		}
		if host == "" || !validPort(p) {
			return nil, fmt.Errorf("bad server %q (want HOST[:PORT])", h)
		}
		out = append(out, net.JoinHostPort(host, p))
	}
	return out, nil
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n < 65536
}

// checkTopic applies Kafka's rules for topic names.
func checkTopic(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("no topic: want kafka://BROKERS/TOPIC")
	case t == "." || t == "..":
		return fmt.Errorf("topic %q is not allowed", t)
	case len(t) > 249:
		return fmt.Errorf("topic name longer than 249 characters")
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic %q: only letters, digits, '.', '_' and '-' are allowed", t)
		}
	}
	return nil
}

// checkStream applies JetStream's rules for stream names.
func checkStream(s string) error {
	if s == "" {
		return fmt.Errorf("no stream: want nats://SERVERS/STREAM[/SUBJECT]")
	}
	if len(s) > 255 {
		return fmt.Errorf("stream name longer than 255 characters")
	}
	if strings.ContainsAny(s, ".*>\\/ \t\r\n") {
		return fmt.Errorf("stream %q: '.', '*', '>', '/', '\\' and white space are not allowed", s)
	}
	return nil
}

// checkSubject accepts a NATS subject: dot-separated non-empty tokens
// without white space; '*' and '>' only as whole tokens, '>' last.
func checkSubject(s string) error {
	toks := strings.Split(s, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return fmt.Errorf("subject %q has an empty token", s)
		case strings.ContainsAny(t, " \t\r\n/"):
			return fmt.Errorf("subject %q: white space and '/' are not allowed", s)
		case t == ">" && i != len(toks)-1:
			return fmt.Errorf("subject %q: '>' must be the last token", s)
		case t != "*" && t != ">" && strings.ContainsAny(t, "*>"):
			return fmt.Errorf("subject %q: wildcards must be whole tokens", s)
		}
	}
	return nil
}

// Literal reports whether a subject has no wildcard, as a subject
// published to must.
func Literal(subject string) bool {
	for _, t := range strings.Split(subject, ".") {
		if t == "*" || t == ">" {
			return false
		}
	}
	return true
}
