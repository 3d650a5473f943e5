#!/usr/bin/env python3
"""Write the seed's own mangled CDC streams as cdclog test data.

The seed (shared/seeds/cdc.py) sketches the CDC protocol in Python. Its
demangler can release a later time before an earlier one and then drop the
earlier one as "old". This script runs the seed's own generators through the
seed's own mangler, writes the result as cdclog JSON Lines, and records how
many times the seed's demangler loses on exactly that stream, so that Go tests
can check that cdclog loses none -- without ever needing ../shared.

Streams written (NAME.jsonl, with NAME.json holding its numbers):

  resilient  mangler(gen_resilient())
  naive      mangler(drop_zero(naive_to_resilient(gen_naive())))

Each file holds every copy of every message of times 0 .. TIMES-1, in the
mangler's order, and nothing else. Cutting is safe: the mangler releases
messages from a heap keyed by time + delay (delay <= 4), so once it releases a
message of time >= TIMES+4 every message of an earlier time has been released;
messages of times >= TIMES are left out (removing them keeps the relative
order of the rest).

The seed's converter, naive_to_resilient, does not drop diffs that sum to zero:
it emits updates with diff 0 and counts them in progress. cdclog rejects a zero
diff as malformed input, so drop_zero removes those updates (and lowers the
count) before mangling. The JSON file records how many were dropped, and also
the figure on the unfixed pipeline (the seed's __main__, which SPEC section 1
quotes: 89 of the first 2,000 times lost).

Lines are cdclog JSON Lines in the seed's progress shape:

  {"update":{"data":"a","time":7,"diff":1}}
  {"progress":{"time":7,"count":2}}

Regenerate (from the repository root, with the seed next to the repository as
in the project's layout):

  python3 scripts/seedstream.py                      # defaults below
  python3 scripts/seedstream.py --seeds ../shared/seeds --times 2000 --out testdata/seed

The output is deterministic (the seed seeds its own random.Random(25)); the
sha256 in each JSON file lets a test check that the stream is the one counted.
"""

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_DELAY = 4  # the seed mangler's largest delay, in times


def load_seed(seeds_dir):
    """Import the seed's cdc.py from seeds_dir as a module."""
    path = os.path.join(seeds_dir, "cdc.py")
    spec = importlib.util.spec_from_file_location("seed_cdc", path)
    if spec is None or not os.path.exists(path):
        sys.exit(f"seedstream: no seed at {path} (give --seeds DIR)")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def drop_zero(seed, stream, dropped):
    """Remove the seed converter's zero-diff updates, lowering each time's
    count to match. Relies on naive_to_resilient's shape: a time's updates
    come right before its progress. dropped[time] counts what was removed."""
    held = []
    for msg in stream:
        if isinstance(msg, seed.Update):
            if msg.incr == 0:
                dropped[msg.time] = dropped.get(msg.time, 0) + 1
            else:
                held.append(msg)
            continue
        yield from held
        yield seed.Progress(msg.time, len(held))
        held = []


def first_times(stream, times):
    """The messages of times below `times`, in stream order, read until the
    mangler can hold none of them any more."""
    out = []
    for msg in stream:
        if msg.time >= times + MAX_DELAY:
            return out
        if msg.time < times:
            out.append(msg)
    return out


def seed_demangle(seed, msgs):
    """The times whose progress the seed's demangler releases on msgs."""
    emitted = set()
    with contextlib.redirect_stdout(io.StringIO()):  # it prints as it goes
        for msg in seed.demangler(iter(msgs)):
            if isinstance(msg, seed.Progress):
                emitted.add(msg.time)
    return emitted


def jsonl(seed, msg):
    """One message as a cdclog JSON line (seed progress shape)."""
    if isinstance(msg, seed.Update):
        body = {"update": {"data": msg.record, "time": msg.time, "diff": msg.incr}}
    else:
        body = {"progress": {"time": msg.time, "count": msg.count}}
    return json.dumps(body, separators=(",", ":")) + "\n"


def stats(seed, msgs, times):
    """The numbers written next to a stream."""
    emitted = {t for t in seed_demangle(seed, msgs) if t < times}
    updates = {m for m in msgs if isinstance(m, seed.Update)}
    return {
        "messages": len(msgs),
        "times": times,
        "distinct_updates": len(updates),
        "seed_demangler_times_emitted": len(emitted),
        "seed_demangler_times_lost": times - len(emitted),
        "seed_demangler_lost_times": sorted(set(range(times)) - emitted),
    }


def write(out_dir, name, seed, msgs, info):
    """Write NAME.jsonl and NAME.json; return the JSON info."""
    text = "".join(jsonl(seed, m) for m in msgs).encode()
    info["sha256"] = hashlib.sha256(text).hexdigest()
    with open(os.path.join(out_dir, name + ".jsonl"), "wb") as f:
        f.write(text)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        f.write(to_json(info))
    return info


def to_json(info):
    """A JSON object with one field per line, lists kept on one line."""
    fields = (f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in info.items())
    return "{\n" + ",\n".join(fields) + "\n}\n"


def resilient(seed, times):
    msgs = first_times(seed.mangler(seed.gen_resilient()), times)
    info = {"source": "mangler(gen_resilient())"}
    info.update(stats(seed, msgs, times))
    return msgs, info


def naive(seed, times):
    dropped = {}
    pipeline = drop_zero(seed, seed.naive_to_resilient(seed.gen_naive()), dropped)
    msgs = first_times(seed.mangler(pipeline), times)
    raw = first_times(seed.mangler(seed.naive_to_resilient(seed.gen_naive())), times)
    raw_emitted = {t for t in seed_demangle(seed, raw) if t < times}
    info = {"source": "mangler(drop_zero(naive_to_resilient(gen_naive())))"}
    info.update(stats(seed, msgs, times))
    info["seed_converter_zero_diffs_dropped"] = sum(n for t, n in dropped.items() if t < times)
    info["unfixed_pipeline_times_lost"] = times - len(raw_emitted)
    return msgs, info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default=os.path.join(REPO, "..", "shared", "seeds"),
                    help="directory holding the seed's cdc.py (default: ../shared/seeds next to the repository)")
    ap.add_argument("--times", type=int, default=2000, help="how many times, from 0, each stream holds")
    ap.add_argument("--out", default=os.path.join(REPO, "testdata", "seed"), help="output directory")
    args = ap.parse_args()
    if args.times < 1:
        sys.exit("seedstream: --times must be positive")
    seed = load_seed(args.seeds)
    os.makedirs(args.out, exist_ok=True)
    for name, build in (("resilient", resilient), ("naive", naive)):
        msgs, info = build(seed, args.times)
        write(args.out, name, seed, msgs, info)
        print(f"{name}: {info['messages']} messages, {info['times']} times, "
              f"seed demangler loses {info['seed_demangler_times_lost']}", file=sys.stderr)


if __name__ == "__main__":
    main()
