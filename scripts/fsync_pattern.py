#!/usr/bin/env python3
"""Replay the write-and-fsync pattern of an ingest run, without the work.

ingest's durable I/O, per group commit: the batch's output bytes appended to
the output file, then fsync; the batch's database pages written (bbolt: the
dirty pages, fdatasync, then the meta page, fdatasync). This script does the
same writes, of the same sizes, with nothing else: the time it takes is the
floor that the disk and the kernel set for an ingest with that pattern (issue
17 goal 6: ingest within 2x of its own fsync pattern). The two files are
written one after the other, as if nothing overlapped; ingest overlaps the
output file's fsync with the database's commit, so its floor is somewhat lower.

Take the pattern from a run (`strace -f -c` counts the fdatasyncs, two a
commit; the output file's size and the bytes bbolt wrote, `strace -e
trace=pwrite64`), e.g. for the 16M seed-like stream:

    scripts/fsync_pattern.py --dir /tmp --commits 760 \\
        --out-bytes 685087041 --db-bytes 720000000

It prints one line: the seconds, the commits and the bytes. Files go in
--dir (use the disk the run used; tmpfs makes fsync free) and are removed.
"""

import argparse
import os
import sys
import tempfile
import time


def replay(d, commits, out_bytes, db_bytes, page):
    out_path = os.path.join(d, "pattern.out")
    db_path = os.path.join(d, "pattern.db")
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    db = os.open(db_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        out_chunk = b"x" * (out_bytes // commits)
        db_chunk = b"y" * max(page, (db_bytes // commits) // page * page)
        meta = b"m" * page
        end = 2 * page
        start = time.monotonic()
        for i in range(commits):
            os.write(out, out_chunk)
            os.fsync(out)
            os.pwrite(db, db_chunk, end)
            end += len(db_chunk)
            os.fdatasync(db)
            os.pwrite(db, meta, (i % 2) * page)
            os.fdatasync(db)
        return time.monotonic() - start, len(out_chunk) * commits, len(db_chunk) * commits
    finally:
        os.close(out)
        os.close(db)
        os.unlink(out_path)
        os.unlink(db_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--commits", type=int, required=True)
    ap.add_argument("--out-bytes", type=int, required=True)
    ap.add_argument("--db-bytes", type=int, required=True)
    ap.add_argument("--page", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=3, help="runs; the best is printed")
    a = ap.parse_args()
    if a.commits <= 0:
        sys.exit("fsync_pattern.py: --commits must be positive")
    best = None
    for _ in range(a.runs):
        os.sync()
        r = replay(a.dir, a.commits, a.out_bytes, a.db_bytes, a.page)
        if best is None or r[0] < best[0]:
            best = r
    load = os.getloadavg()[0]
    print(f"fsync pattern: {best[0]:.2f} s for {a.commits} commits, {best[1] / 1e6:.0f} MB to the output file, "
          f"{best[2] / 1e6:.0f} MB to the database; best of {a.runs}, load {load:.2f}")


if __name__ == "__main__":
    main()
