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
	flag.Parse()
	if err := run(*url, *in, *producers, *per); err != nil {
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
	all := slices.Concat(latencies...)
	slices.Sort(all)
	q := func(f float64) time.Duration {
		return all[min(len(all)-1, int(f*float64(len(all))))].Round(10 * time.Microsecond)
	}
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
