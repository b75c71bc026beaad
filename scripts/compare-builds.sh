#!/usr/bin/env bash
# Before and after on one machine: builds an older checkout (a directory with
# its source, e.g. `git archive <commit> | tar -x -C .before`) beside this
# one, then runs the named benchmarks on both, alternating before/after twice,
# so a change's effect on call overhead and op speed is read side by side in
# one run (as the issues ask: "before and after, in one call"). This checkout
# must be built already (scripts/gpu-run.sh tests, or npm run build).
#   bash scripts/compare-builds.sh <before-dir> [bench ...]   (default: op-calls calls ops)
# A bench file missing from the older checkout is copied into it (bench/op-calls.bench.ts
# uses only the public API for that reason). Logs go to $OUT (or ./gpu-run-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-summary.sh
[ $# -ge 1 ] || { echo "usage: bash scripts/compare-builds.sh <before-dir> [bench ...]" >&2; exit 2; }
before=$(cd "$1" && pwd) || exit 2
shift
benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(op-calls calls ops)
logs=${OUT:-gpu-run-logs}
mkdir -p "$logs"

[ -e "$before/node_modules" ] || ln -s "$PWD/node_modules" "$before/node_modules"
for b in "${benches[@]}"; do
  [ -f "$before/bench/$b.bench.ts" ] || cp "bench/$b.bench.ts" "$before/bench/"
done
if ! (cd "$before" && node scripts/build-core.js && npx tsc -p tsconfig.json && node scripts/build-ops.js) >"$logs/before-build.log" 2>&1; then
  echo "compare-builds: the older checkout did not build (see $logs/before-build.log):"
  tail -n 20 "$logs/before-build.log"
  exit 1
fi

status=0
for round in 1 2; do
  for b in "${benches[@]}"; do
    for side in before after; do
      dir=.
      [ "$side" = before ] && dir=$before
      if ! (cd "$dir" && node "dist/bench/$b.bench.js") >"$logs/$side-$b-$round.log" 2>&1; then
        echo "bench $b ($side, round $round): exit status non-zero"
        status=1
      fi
    done
  done
done

echo "==== before / after (round 2; round 1 in $logs)"
for b in "${benches[@]}"; do
  for side in before after; do
    echo "-- $b: $side"
    log="$logs/$side-$b-2.log"
    bench_summary "$log" 16
  done
done
exit $status
