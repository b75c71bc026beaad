#!/usr/bin/env bash
# The two-GPU evidence in one call on a lent machine of several GPUs, the
# parts that need more than one GPU first (a short lease may end early):
# build for the GPUs present, the multi-GPU, NCCL and chunked tests with
# GPUEXT_REQUIRE_MULTI_GPU=1, the examples over every GPU (Dask's
# add_broadcast by mapBlocks, the chunked SVD, data-parallel training on
# NCCL), bench:dist beside torch.distributed, then the rest of the suite.
# Logs go to $OUT (or ./gpu-run-logs); summary lines are printed last.
#   bash scripts/multi-gpu-run.sh                  # all of the above
#   bash scripts/multi-gpu-run.sh autograd lltm    # also these benches, after bench:dist, before the rest of the suite
#   bash scripts/multi-gpu-run.sh quick            # without the rest of the suite
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-summary.sh
logs=${OUT:-gpu-run-logs}
mkdir -p "$logs"
export GPUEXT_REQUIRE_CUDA=1 GPUEXT_REQUIRE_MULTI_GPU=1
arch=${GPUEXT_CUDA_ARCH:-native}
rest=1
benches=()
for a in "$@"; do
  if [ "$a" = quick ]; then rest=0; else benches+=("$a"); fi
done
status=0
nvidia-smi -L
GPUEXT_CUDA_ARCH=$arch npm run build:gpu >"$logs/build.log" 2>&1 || { tail -n 30 "$logs/build.log"; exit 1; }
multi=(dist/test/multi-gpu.test.js dist/test/distributed-nccl.test.js dist/test/distributed.test.js dist/test/chunked.test.js)
node scripts/run-tests.js "${multi[@]}" >"$logs/multi-tests.log" 2>&1 || status=1
echo "multi-GPU tests: $(tail -n 1 "$logs/multi-tests.log")"
{ node dist/examples/distributed.js &&
  node dist/lib/cli/main.js run --nproc-per-node "$(nvidia-smi -L | wc -l)" dist/examples/allreduce-train.js; } >"$logs/examples.log" 2>&1 || status=1
cat "$logs/examples.log"
npm run bench:dist >"$logs/bench-dist.log" 2>&1 || { echo "bench dist: exit status non-zero"; status=1; }
bench_summary "$logs/bench-dist.log" 12
for b in "${benches[@]}"; do
  npm run "bench:$b" >"$logs/bench-$b.log" 2>&1 || { echo "bench $b: exit status non-zero"; status=1; }
  echo "-- bench $b"
  bench_summary "$logs/bench-$b.log" 12
done
if [ "$rest" -eq 1 ]; then
  others=$(ls dist/test/*.test.js | grep -v -F -x "$(printf '%s\n' "${multi[@]}")")
  # shellcheck disable=SC2086
  node scripts/run-tests.js $others >"$logs/tests.log" 2>&1 || status=1
  echo "rest of the suite: $(tail -n 1 "$logs/tests.log")"
fi
exit $status
