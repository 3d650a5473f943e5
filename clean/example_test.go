package clean_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/clean"
)

// A duplicated and reordered stream in, the clean stream out: time 1 is
// released only once time 0 is complete, and the duplicate is dropped.
func ExampleStream() {
	in := strings.NewReader(`{"update":{"data":"b","time":1,"diff":1}}
{"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":1}]}}
{"update":{"data":"a","time":0,"diff":1}}
{"update":{"data":"a","time":0,"diff":1}}
{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}
`)
	res, err := clean.Stream(context.Background(), cdc.NewReader(in, cdc.JSONL, "in"), cdc.NewWriter(os.Stdout, cdc.JSONL), clean.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Messages, "messages,", res.Stats.Duplicates, "duplicate; frontier", res.Stuck.Time)
	// Output:
	// {"update":{"data":"a","time":0,"diff":1}}
	// {"update":{"data":"b","time":1,"diff":1}}
	// {"progress":{"lower":0,"upper":2,"counts":[{"time":0,"count":1},{"time":1,"count":1}]}}
	// 5 messages, 1 duplicate; frontier 2
}
