package recovery

import "testing"

func TestFrontierAccessorsFollowTheCommits(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	if f, done := p.Frontier(); f != 0 || done {
		t.Fatalf("new database: frontier %d, complete %v", f, done)
	}
	appendAll(t, p, cleanStream(31, 0, 100), 1000)
	if f, done := p.Frontier(); f != 100 || done {
		t.Fatalf("after times [0, 100): frontier %d, complete %v", f, done)
	}
	p.Close()
	if _, err := GC(path, GCOptions{KeepTimes: 10, NoCompact: true}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, done := r.Frontier(); f != 100 || done {
		t.Fatalf("reader: frontier %d, complete %v", f, done)
	}
	if fl := r.WALFloor(); fl != 90 {
		t.Fatalf("WAL floor %d after gc keeping 10 times below frontier 100, want 90", fl)
	}
}
