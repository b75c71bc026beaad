#!/usr/bin/env bash
# The GPU evidence in one call on a lent machine: build for its GPU, the whole
# suite with GPUEXT_REQUIRE_CUDA=1, then every benchmark (side by side with
# torch/cupy/numpy where they have a counterpart). Each log goes to $OUT (or
# ./gpu-run-logs) and the summary blocks are printed last, so the tail of the
# output holds the figures.
#   bash scripts/gpu-run.sh                 # suite + every bench
#   bash scripts/gpu-run.sh tests           # the suite only
#   bash scripts/gpu-run.sh bench ops rtc   # named benches only (bench:<name>; "core" is npm run bench)
# GPUEXT_CUDA_ARCH picks the arch (default: the GPUs present).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-summary.sh
logs=${OUT:-gpu-run-logs}
mkdir -p "$logs"

what=("$@")
[ ${#what[@]} -eq 0 ] && what=(tests bench)
run_tests=0
benches=()
for w in "${what[@]}"; do
  case "$w" in
    tests) run_tests=1 ;;
    bench) benches=(core ops linalg einsum indexing rtc ext streams calls cpu jit dist autograd lltm conv conv-parts sort io) ;;
    *) benches+=("$w") ;;
  esac
done

status=0
if [ "$run_tests" -eq 1 ]; then
  npm run test:gpu >"$logs/tests.log" 2>&1 || status=1
  tail -n 1 "$logs/tests.log"
fi
for b in "${benches[@]}"; do
  script="bench:$b"
  [ "$b" = core ] && script=bench
  if ! npm run "$script" >"$logs/bench-$b.log" 2>&1; then
    echo "bench $b: exit status non-zero (see $logs/bench-$b.log)"
    status=1
  fi
done

echo
echo "==== summaries"
[ "$run_tests" -eq 1 ] && echo "tests: $(tail -n 1 "$logs/tests.log")"
for b in "${benches[@]}"; do
  echo "-- bench $b"
  # The last "== summary" block, else the log's last lines.
  bench_summary "$logs/bench-$b.log" 12
done
exit $status
