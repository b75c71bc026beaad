#!/usr/bin/env bash
# The two-GPU evidence in one call on a lent machine of several GPUs, the
# parts that need more than one GPU first (a short lease may end early):
# build for the GPUs present, the multi-GPU, NCCL and chunked tests with
# GPUEXT_REQUIRE_MULTI_GPU=1, the examples over every GPU (Dask's
# add_broadcast by mapBlocks, the chunked SVD, data-parallel training on
# NCCL), bench:dist beside torch.distributed, then the rest of the suite.
# Logs go to $OUT (or ./gpu-run-logs); summary lines are printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-summary.sh
logs=${OUT:-gpu-run-logs}
mkdir -p "$logs"
export GPUEXT_REQUIRE_CUDA=1 GPUEXT_REQUIRE_MULTI_GPU=1
arch=${GPUEXT_CUDA_ARCH:-native}
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
if [ "${1:-}" != quick ]; then
  rest=$(ls dist/test/*.test.js | grep -v -F -x "$(printf '%s\n' "${multi[@]}")")
  # shellcheck disable=SC2086
  node scripts/run-tests.js $rest >"$logs/tests.log" 2>&1 || status=1
  echo "rest of the suite: $(tail -n 1 "$logs/tests.log")"
fi
exit $status
