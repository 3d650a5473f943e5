package ordering

import (
	"fmt"
	"io"
	"os"
)

// OpenShards opens the named shard files for MergeJSONL, in the order
// given, before anything is merged, so that a missing file or a directory
// fails the merge before it writes a record. The name "-" is stdin, the
// shard named "<stdin>"; it can be at most one of them (more is a
// *cdc.OptionError, before any file is opened). The returned close
// closes every file opened (not stdin); on an error, what was opened is
// closed already and the error names the file.
func OpenShards(names []string, stdin io.Reader) (shards []Shard, closeAll func(), err error) {
	if err := checkShardNames(names); err != nil {
		return nil, nil, err
	}
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	shards = make([]Shard, 0, len(names))
	for _, name := range names {
		if name == "-" {
			shards = append(shards, Shard{Name: "<stdin>", R: stdin})
			continue
		}
		f, err := openShard(name)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		shards = append(shards, Shard{Name: name, R: f})
	}
	return shards, closeAll, nil
}

// openShard opens a shard file, refusing a directory up front rather than
// at its first read.
func openShard(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a shard file", name)
	}
	return f, nil
}
