#!/usr/bin/env bash
# Nsight Systems sees gpuext's ops by name: runs bench/profiler-step under
# `nsys profile` (CUDA and NVTX traces) and prints the NVTX ranges by name
# ('step' from gx.profiler.range, one per op from start({ nvtx: true })) and
# the top kernels. Needs nsys (the CUDA toolkit's Nsight Systems) and a GPU;
# run after `npx tsc -p tsconfig.json`.
#   bash scripts/nsys-profile.sh          # report in $OUT (or ./nsys-logs)
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${OUT:-nsys-logs}
mkdir -p "$logs"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems-*/bin/nsys 2>/dev/null | head -n 1)
if [ -z "$nsys" ]; then
  echo "nsys-profile: nsys not found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-systems)"
  exit 1
fi
"$nsys" profile --trace=cuda,nvtx --force-overwrite=true -o "$logs/profiler-step" \
  env GPUEXT_BENCH_PROFILE_STEPS=3 node dist/bench/profiler-step.js >"$logs/nsys-run.log" 2>&1
status=$?
tail -n 12 "$logs/nsys-run.log"
# An nsys without its importer beside it (the copy bundled with Nsight Compute)
# leaves a .qdstrm: convert it with the QdstrmImporter found nearby.
if [ ! -f "$logs/profiler-step.nsys-rep" ] && [ -f "$logs/profiler-step.qdstrm" ]; then
  importer=$(ls "$(dirname "$nsys")"/../*/QdstrmImporter 2>/dev/null | head -n 1)
  [ -n "$importer" ] && "$importer" -i "$logs/profiler-step.qdstrm" >>"$logs/nsys-run.log" 2>&1
fi
# The report's name changed across nsys versions (nvtxsum -> nvtx_sum).
for r in nvtx_sum nvtxsum; do
  if "$nsys" stats --report "$r" --format csv "$logs/profiler-step.nsys-rep" >"$logs/nvtx.csv" 2>"$logs/nvtx.err"; then break; fi
done
echo "== NVTX ranges by name (nsys stats)"
head -n 25 "$logs/nvtx.csv"
for r in cuda_gpu_kern_sum gpukernsum; do
  if "$nsys" stats --report "$r" --format csv "$logs/profiler-step.nsys-rep" >"$logs/kernels.csv" 2>/dev/null; then break; fi
done
echo "== top kernels"
head -n 8 "$logs/kernels.csv" | cut -c1-200
grep -q '"\?step"\?' "$logs/nvtx.csv" || { echo "nsys-profile: no 'step' range in the report"; status=1; }
exit $status
