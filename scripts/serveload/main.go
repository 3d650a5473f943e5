// Command serveload is the load generator of scripts/bench-serve: it posts
// a JSON Lines file to a running `cdclog serve` from concurrent producers,
// in requests of a fixed number of lines, and prints one line of figures:
// messages and requests per second from the first request sent to the
// last answered, and the answers' latency.
//
//	serveload -url http://127.0.0.1:8470 -in in.jsonl -producers 8 -lines 1000
//
// Request i goes to producer i mod producers, which sends its requests in
// order, each once the previous one is answered. Any answer but 200 stops
// it with an error.
//
// With -trickle N it measures latency instead, on a new database: a
// consumer reads /v1/output as a stream while one producer appends N
// times, one at a time, each as one update and the progress statement
// that completes it; it prints the time from sending an append to reading
// its last released record on the stream (p50, p99, max).
//
//	serveload -url http://127.0.0.1:8470 -trickle 200
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8470", "the server")
	in := flag.String("in", "", "JSON Lines input `FILE`")
	producers := flag.Int("producers", 8, "concurrent producers")
	per := flag.Int("lines", 1000, "lines per request")
	trickle := flag.Int("trickle", 0, "measure the release latency of `N` one-time appends instead")
	flag.Parse()
	var err error
	if *trickle > 0 {
		err = runTrickle(*url, *trickle)
	} else {
		err = run(*url, *in, *producers, *per)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func run(url, in string, producers, per int) error {
	reqs, lines, err := requests(in, per)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: producers}}
	latencies := make([][]time.Duration, producers)
	errs := make(chan error, producers)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(reqs); i += producers {
				t := time.Now()
				if err := post(client, url, reqs[i]); err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				latencies[g] = append(latencies[g], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	q := quantiles(slices.Concat(latencies...))
	fmt.Printf("messages=%d requests=%d producers=%d elapsed=%s msgs_per_s=%.0f requests_per_s=%.0f latency_p50=%s latency_p99=%s\n",
		lines, len(reqs), producers, elapsed.Round(time.Millisecond), float64(lines)/elapsed.Seconds(),
		float64(len(reqs))/elapsed.Seconds(), q(0.5), q(0.99))
	return nil
}

// requests reads the file and cuts it into bodies of per lines.
func requests(path string, per int) (reqs [][]byte, lines int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var b bytes.Buffer
	n := 0
	for sc.Scan() {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
		lines++
		if n++; n == per {
			reqs, n = append(reqs, bytes.Clone(b.Bytes())), 0
			b.Reset()
		}
	}
	if n > 0 {
		reqs = append(reqs, bytes.Clone(b.Bytes()))
	}
	return reqs, lines, sc.Err()
}

// post sends one request and checks that it was committed.
func post(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url+"/v1/append", "application/x-ndjson", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if !json.Valid(b) {
		return fmt.Errorf("the answer is not JSON: %s", b)
	}
	return nil
}

// quantiles sorts d and returns its quantile function.
func quantiles(d []time.Duration) func(float64) time.Duration {
	slices.Sort(d)
	return func(f float64) time.Duration {
		return d[min(len(d)-1, int(f*float64(len(d))))].Round(10 * time.Microsecond)
	}
}

// runTrickle appends n times one at a time and measures how long each
// takes to come out of the output stream.
func runTrickle(url string, n int) error {
	resp, err := http.Get(url + "/v1/output?from=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/v1/output: %s", resp.Status)
	}
	records := bufio.NewReader(resp.Body)
	var lat []time.Duration
	for t := range n {
		body := fmt.Sprintf(`{"update":{"data":"t%d","time":%d,"diff":1}}`+"\n"+
			`{"progress":{"lower":%d,"upper":%d,"counts":[{"time":%d,"count":1}]}}`+"\n", t, t, t, t+1, t)
		start := time.Now()
		if err := post(http.DefaultClient, url, []byte(body)); err != nil {
			return fmt.Errorf("append %d: %w", t, err)
		}
		for range 2 { // the update, then the progress statement
			if _, err := records.ReadString('\n'); err != nil {
				return fmt.Errorf("the output stream: %w", err)
			}
		}
		lat = append(lat, time.Since(start))
	}
	q := quantiles(lat)
	fmt.Printf("appends=%d release_latency_p50=%s p99=%s max=%s\n", n, q(0.5), q(0.99), q(1))
	return nil
}
