import json, random, sys, ref
seed = int(sys.argv[1]); rng = random.Random(seed * 7919 + 1)
lines = ref.gen(random.Random(seed))
i = rng.randrange(len(lines)); m = json.loads(lines[i]); kind = rng.randrange(4)
if 'update' in m:
    u = m['update']
    if kind == 0: u['diff'] = u['diff'] + 1 if u['diff'] not in (-1, 2**63-1) else 5   # conflicting diff
    elif kind == 1: u['data'] = ['extra', rng.randrange(1000)]                      # one update too many
    else: u['time'] = min(u['time'] + rng.choice([1, 3, 100]), 2**64 - 1)                         # at a (maybe) zero-count time
else:
    p = m['progress']
    if 'counts' in p and p['counts']:
        c = rng.choice(p['counts']); c['count'] += rng.choice([1, -1]) if c['count'] > 1 else 1
    elif 'count' in p: p['count'] += 1
    else: p['counts'] = [{'time': (p['lower'][0] if isinstance(p['lower'], list) else p['lower']), 'count': 3}]
new = json.dumps(m)
pos = rng.randrange(len(lines) + 1)
lines.insert(pos, new)
open(sys.argv[2], 'w').write(''.join(l + '\n' for l in lines))
out, v = ref.run(lines)
open(sys.argv[3], 'w').write(''.join(l + '\n' for l in out))
print('violation' if v else 'ok')
