#!/usr/bin/env python3
"""The seed's side of scripts/bench: its stream, and its demangler's speed.

Imports the seed (cdc.py) from --seeds; nothing of it is copied here. The
stream is the first --messages messages of the seed's own
mangler(gen_resilient()), so the seed demangler is measured on its own tuples
and cdclog on the identical stream, written as cdclog JSON Lines:

  {"update":{"data":"a","time":7,"diff":1}}
  {"progress":{"time":7,"count":2}}        (the seed's progress shape)

  python3 scripts/bench_seed.py --seeds ../shared/seeds --messages 2000000 \\
      --jsonl stream.jsonl --runs 3

With --runs R > 0 the tuples are built in a list first, then only
`for _ in demangler(iter(tuples)): pass` is timed, R times; the seed's
print() ("frontier moved to: ...", on every release) is replaced by a no-op
in the seed module, so no I/O is timed. That is the baseline ("seconds").
For reference it is also timed R times with print() left in and stdout sent
to /dev/null ("seconds_printing"), which is about a third slower. Before
timing, the garbage collector collects and freezes the prebuilt list
(gc.freeze), so the seed is not charged for scanning the benchmark's own
list; on CPython 3.11 that made no measurable difference.

With --runs 0 (used for the 10x stream) nothing is timed and the stream is
written as it is generated, without a list.

Prints one JSON object on stdout: messages, seconds (best run), every run's
seconds, msgs_per_s, seconds_printing, and how many records the seed
demangler released (it loses times: see SPEC section 1).
"""

import argparse
import contextlib
import gc
import importlib.util
import itertools
import json
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_seed(seeds_dir):
    path = os.path.join(seeds_dir, "cdc.py")
    if not os.path.exists(path):
        sys.exit(f"bench_seed: no seed at {path} (give --seeds DIR)")
    spec = importlib.util.spec_from_file_location("seed_cdc", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_jsonl(seed, msgs, path):
    """Write msgs as cdclog JSON Lines; the seed's data are a few short
    strings, so their JSON encodings are cached."""
    update = seed.Update
    data = {}
    with open(path, "w", buffering=1 << 20) as f:
        w = f.write
        for m in msgs:
            if type(m) is update:
                d = data.get(m.record)
                if d is None:
                    d = data[m.record] = json.dumps(m.record)
                w('{"update":{"data":%s,"time":%d,"diff":%d}}\n' % (d, m.time, m.incr))
            else:
                w('{"progress":{"time":%d,"count":%d}}\n' % (m.time, m.count))


def time_runs(seed, tuples, runs):
    """Every run's wall time of `for _ in demangler(iter(tuples))`."""
    secs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in seed.demangler(iter(tuples)):
            pass
        secs.append(time.perf_counter() - t0)
    return secs


def time_demangler(seed, tuples, runs):
    """Run times with print() a no-op, run times with print() writing to
    /dev/null (closer to how the issue's 2.4 million/s was probably
    measured), and how many records the demangler releases."""
    gc.collect()
    gc.freeze()
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        for _ in seed.demangler(iter(tuples[:1000])):  # warm up
            pass
        printing = time_runs(seed, tuples, runs)
    seed.print = lambda *a, **k: None  # shadows the builtin inside the seed module
    secs = time_runs(seed, tuples, runs)
    out = sum(1 for _ in seed.demangler(iter(tuples)))  # untimed
    return secs, printing, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default=os.path.join(REPO, "..", "shared", "seeds"),
                    help="directory holding the seed's cdc.py")
    ap.add_argument("--messages", type=int, default=2_000_000)
    ap.add_argument("--jsonl", help="write the stream here as cdclog JSON Lines")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of the seed demangler (0: none)")
    args = ap.parse_args()
    if args.messages < 1:
        sys.exit("bench_seed: --messages must be positive")
    seed = load_seed(args.seeds)
    stream = itertools.islice(seed.mangler(seed.gen_resilient()), args.messages)
    result = {"messages": args.messages, "source": "islice(mangler(gen_resilient()), messages)"}
    if args.runs <= 0:
        if args.jsonl:
            write_jsonl(seed, stream, args.jsonl)
        print(json.dumps(result))
        return
    t0 = time.perf_counter()
    tuples = list(stream)
    result["build_seconds"] = round(time.perf_counter() - t0, 3)
    if args.jsonl:
        write_jsonl(seed, tuples, args.jsonl)
    secs, printing, out = time_demangler(seed, tuples, args.runs)
    best = min(secs)
    result.update(seconds=best, runs=[round(s, 4) for s in secs],
                  msgs_per_s=args.messages / best, records_out=out,
                  seconds_printing=min(printing), runs_printing=[round(s, 4) for s in printing])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
