#!/usr/bin/env bash
# Differential check of cdclog against an independent Python reference
# receiver (ref.py, written from SPEC section 1 and the claim-by-claim
# violation rule of demangle/doc.go, not from cdclog's code).
#
#   scripts/oracle/run.sh [FROM [TO]]     # seeds, default 1..200
#
# For each seed: a random stream, duplicated and reordered adversarially,
# through `demangle` and `ingest --db --out`, compared byte for byte with
# the reference; then the same stream with one contradicting message
# injected (viol.py), where the exit code (3 or 0) and the output before
# the violation must match. Not part of the default test run.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
from=${1:-1}; to=${2:-200}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
(cd "$here/../.." && go build -o "$work/cdclog" ./cmd/cdclog) || exit 1
bin="$work/cdclog"; fail=0; viol=0
for s in $(seq "$from" "$to"); do
  r=$(python3 "$here/ref.py" "$s" "$work/in" "$work/exp")
  "$bin" demangle -q "$work/in" > "$work/got" 2>"$work/err"; rc=$?
  if [ "$rc" != 0 ] || ! cmp -s "$work/got" "$work/exp"; then
    echo "seed $s: demangle rc=$rc, output differs ($r)"; fail=$((fail+1)); continue
  fi
  rm -f "$work/db" "$work/out"
  "$bin" ingest -q --db "$work/db" --out "$work/out" "$work/in" 2>>"$work/err"; rc=$?
  if [ "$rc" != 0 ] || ! cmp -s "$work/out" "$work/exp"; then
    echo "seed $s: ingest rc=$rc, output differs"; fail=$((fail+1)); continue
  fi
  r=$(cd "$here" && python3 viol.py "$s" "$work/vin" "$work/vexp")
  "$bin" demangle -q "$work/vin" > "$work/vgot" 2>"$work/verr"; rc=$?
  want=0; [ "$r" = violation ] && { want=3; viol=$((viol+1)); }
  if [ "$rc" != "$want" ] || ! cmp -s "$work/vgot" "$work/vexp"; then
    echo "seed $s: injected violation: demangle rc=$rc, want $want"; fail=$((fail+1))
  fi
done
echo "seeds $from-$to: $fail failed, $viol with an injected violation"
[ "$fail" = 0 ]
