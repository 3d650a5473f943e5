#!/usr/bin/env python3
"""Independent reference receiver and adversarial stream maker for SPEC section 1."""
import json, random, sys

INF = None

def canon(v):
    return json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)

class Violation(Exception):
    pass

class Ref:
    def __init__(s, start=0):
        s.F = start          # None = end of stream reached
        s.upd = {}           # t -> {canon: diff}
        s.iv = []            # held intervals (lo, hi or None)
        s.cnt = {}           # t -> count
        s.out = []
    def stale_time(s, t):
        return s.F is None or t < s.F
    def push_update(s, data, t, diff):
        if s.stale_time(t):
            return
        d = s.upd.get(t, {})
        c = canon(data)
        if c in d:
            if d[c] != diff:
                raise Violation('diff')
            return
        cc = s.covered_count(t)
        if cc is not None and len(d) + 1 > cc:
            raise Violation('count')
        s.upd.setdefault(t, {})[c] = diff
        s.advance()
    def covered_count(s, t):
        if t in s.cnt:
            return s.cnt[t]
        for lo, hi, holes in s.iv:
            if lo <= t and (hi is None or t < hi) and t not in holes:
                return 0
        return None
    def push_progress(s, lo, hi, counts):
        if s.F is None or (hi is not None and hi <= s.F):
            return
        lo = max(lo, s.F)
        inr = lambda t: t >= lo and (hi is None or t < hi)
        holes = set()
        for t, c in counts.items():
            if not inr(t):
                continue
            old = s.covered_count(t)
            if (old is not None and old != c) or c < len(s.upd.get(t, {})):
                holes.add(t)
        for t, c in s.cnt.items():
            if inr(t) and t not in counts and c != 0:
                holes.add(t)
        for t, d in s.upd.items():
            if inr(t) and t not in counts and d:
                holes.add(t)
        for t, c in counts.items():
            if inr(t) and c and t not in holes:
                s.cnt[t] = c
        s.iv.append((lo, hi, holes))
        s.advance()
        if holes:
            raise Violation('progress')
    def advance(s):
        c = s.F
        changed = True
        while changed and c is not None:
            changed = False
            for lo, hi, holes in s.iv:
                if lo <= c and (hi is None or c < hi) and c not in holes:
                    hs = [h for h in holes if h > c and (hi is None or h < hi)]
                    c = min(hs) if hs else hi
                    changed = True
                    break
        end = c
        stops = [t for t, n in s.cnt.items() if t >= s.F and (end is None or t < end) and len(s.upd.get(t, {})) < n]
        if stops:
            end = min(stops)
        if end == s.F:
            return
        old = s.F
        inr = lambda t: t >= old and (end is None or t < end)
        for t in sorted(t for t in s.upd if inr(t)):
            for c, diff in sorted(s.upd[t].items(), key=lambda kv: (kv[0].encode('utf-8'), kv[1])):
                s.out.append('{"update":{"data":%s,"time":%d,"diff":%d}}' % (c, t, diff))
        cs = ','.join('{"time":%d,"count":%d}' % (t, n) for t, n in sorted(s.cnt.items()) if inr(t) and n)
        if end is None:
            s.out.append('{"progress":{"lower":%d,"counts":[%s]}}' % (old, cs))
        else:
            s.out.append('{"progress":{"lower":%d,"upper":%d,"counts":[%s]}}' % (old, end, cs))
        s.F = end
        s.upd = {t: d for t, d in s.upd.items() if not inr(t) and (end is not None)}
        s.cnt = {t: n for t, n in s.cnt.items() if not inr(t) and (end is not None)}
        s.iv = [(max(lo, end), hi, {h for h in holes if h >= end}) for lo, hi, holes in s.iv if end is not None and (hi is None or hi > end)]

def parse(line):
    m = json.loads(line)
    if 'update' in m:
        u = m['update']
        return ('u', u['data'], int(u['time']), int(u['diff']))
    p = m['progress']
    if 'time' in p:
        t = int(p['time'])  # the seed's shape: [t, t+1), to the end for the last time
        return ('p', t, t + 1 if t < 2**64 - 1 else None, {t: int(p['count'])} if int(p['count']) else {})
    lo = p['lower']; hi = p.get('upper')
    if isinstance(lo, list): lo = lo[0] if lo else 0
    if isinstance(hi, list): hi = hi[0] if hi else None
    return ('p', int(lo), None if hi is None else int(hi), {int(c['time']): int(c['count']) for c in (p.get('counts') or []) if int(c['count'])})

def run(lines, start=0):
    r = Ref(start)
    try:
        for l in lines:
            m = parse(l)
            if m[0] == 'u':
                r.push_update(*m[1:])
            else:
                r.push_progress(*m[1:])
    except Violation as e:
        r.at = l
        return r.out, str(e)
    return r.out, None

# ---- generation ----
def rand_data(rng, depth=0):
    k = rng.randrange(9 if depth < 2 else 5)
    if k == 0: return rng.randrange(-5, 50)
    if k == 1: return rng.choice(['a', 'b', 'é', 'ü', '日本', 'x\ny', 'q"q', 'b\\s', '\u2028', '<&>', '', '😀', 'A'])
    if k == 2: return rng.choice([True, False, None])
    if k == 3: return 'k%d' % rng.randrange(30)
    if k == 4: return rng.randrange(10**15, 10**18)
    if k in (5, 6): return {rng.choice(['a', 'b', 'B', 'é', 'zz', '1', '_']): rand_data(rng, depth + 1) for _ in range(rng.randrange(4))}
    return [rand_data(rng, depth + 1) for _ in range(rng.randrange(4))]

def gen(rng):
    ntimes = rng.randrange(1, 25)
    t = rng.randrange(0, 5)
    times = []
    for _ in range(ntimes):
        t += rng.choice([1, 1, 1, 2, 5, 1000, 10**12])
        times.append(t)
    if rng.random() < 0.2:
        # The end of the time range: the last time is 2**64-1 or the one
        # before, the rest at their distances below it.
        off = (2**64 - 1 - rng.randrange(2)) - times[-1]
        times = [t + off for t in times]
    start = 0
    updates = {}
    for t in times:
        n = rng.choice([0, 0, 1, 2, 3, 5, 10])
        ds = {}
        for _ in range(n * 3):
            if len(ds) >= n: break
            d = rand_data(rng)
            ds[canon(d)] = (d, rng.choice([1, -1, 2, -3, 7, 2**62, -(2**63)]))
        updates[t] = list(ds.values())
    last = times[-1] + 1
    openend = rng.random() < 0.6
    hi_end = None if openend else last + rng.randrange(0, 3)
    if hi_end is not None and hi_end > 2**64 - 1:
        hi_end = None  # past the last time: the end of the stream
    # progress statements: random partition of [start, hi_end)
    k = min(rng.randrange(0, 6), last - start)
    if last - start < 2**62:
        picked = rng.sample(range(start + 1, last + 1), k)
    else:  # too wide for sample: k draws, maybe fewer distinct
        picked = [rng.randrange(start + 1, last + 1) for _ in range(k)]
    cuts = sorted(set(picked) | {start})
    bounds = cuts + [hi_end]
    stmts = []
    for i in range(len(cuts)):
        lo, hi = bounds[i], bounds[i + 1]
        stmts.append((lo, hi))
    # extra re-batched overlapping statements
    for _ in range(rng.randrange(0, 3)):
        a = rng.randrange(start, last)
        b = rng.choice([None, rng.randrange(a + 1, last + 2)]) if hi_end is None else rng.randrange(a + 1, hi_end + 1) if hi_end > a else None
        if b is None and hi_end is not None: continue
        stmts.append((a, b))
    msgs = []
    def pmsg(lo, hi):
        cs = [(t, len(updates[t])) for t in times if t >= lo and (hi is None or t < hi) and updates[t]]
        # sometimes list zero counts explicitly
        if rng.random() < 0.2:
            cs += [(t, 0) for t in times if t >= lo and (hi is None or t < hi) and not updates[t]]
        rng.shuffle(cs)
        form = rng.randrange(4)
        if form == 0 and hi is not None and hi == lo + 1 and rng.random() < 0.5:
            c = cs[0][1] if cs else 0
            return json.dumps({'progress': {'time': lo, 'count': c}})
        p = {'lower': [lo] if form == 1 else lo}
        if hi is None:
            if form == 1: p['upper'] = []
            elif form == 2: p['upper'] = None
        else:
            p['upper'] = [hi] if form == 1 else hi
        p['counts'] = [{'count': c, 'time': t} if rng.random() < 0.5 else {'time': t, 'count': c} for t, c in cs]
        if not cs and rng.random() < 0.3: del p['counts']
        return json.dumps({'progress': p}, ensure_ascii=rng.random() < 0.5)
    for lo, hi in stmts:
        if lo > 2**64 - 1:
            continue  # past the last time: covers nothing
        if hi is not None and hi > 2**64 - 1:
            hi = None  # to the end of the range
        if hi is not None and hi <= lo:
            continue
        msgs.append(pmsg(lo, hi))
    for t in times:
        for d, diff in updates[t]:
            u = {'data': d, 'time': t, 'diff': diff}
            if rng.random() < 0.1: u = {'diff': diff, 'time': t, 'data': d}
            msgs.append(json.dumps({'update': u}, ensure_ascii=rng.random() < 0.5, indent=None, separators=rng.choice([(',', ':'), (', ', ': ')])))
    # mangle: duplicates, reorder
    out = []
    for m in msgs:
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            out.append(m)
    mode = rng.randrange(4)
    if mode == 0: rng.shuffle(out)
    elif mode == 1: out.sort(key=lambda m: 0 if '"progress"' in m else 1)  # progress first
    elif mode == 2: out.sort(key=lambda m: 1 if '"progress"' in m else 0); rng.shuffle(out[:len(out)//2])  # progress last
    else:
        # local reorder
        for i in range(len(out)):
            j = min(len(out) - 1, i + rng.randrange(0, 5)); out[i], out[j] = out[j], out[i]
        # late duplicates
        out += rng.sample(out, min(len(out), rng.randrange(0, 10)))
    return out

if __name__ == '__main__':
    seed = int(sys.argv[1])
    rng = random.Random(seed)
    lines = gen(rng)
    with open(sys.argv[2], 'w') as f:
        f.write(''.join(l + '\n' for l in lines))
    out, viol = run(lines)
    with open(sys.argv[3], 'w') as f:
        f.write(''.join(l + '\n' for l in out))
    print('violation' if viol else 'ok')
