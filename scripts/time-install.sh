#!/usr/bin/env bash
# Times what a user waits for, on this machine:
#   1. the packed tarball installed into a fresh app (npm install <tgz>),
#   2. a fresh clone's `npm install` (a source build for the GPUs present).
# Usage: scripts/time-install.sh [tarball]   (no tarball: `npm pack` here first,
# which builds the prebuilt binaries when they are stale: minutes).
# Dependencies come from npm's cache when it has them (--prefer-offline). On a
# machine without the registry, fill a cache where the registry is
# (`npm_config_cache=$PWD/.device/npm-cache npm ci` and `npm install <tgz>`
# in a scratch app), bring it along, and run with that npm_config_cache and
# GPUEXT_OFFLINE=1 (npm --offline). Say in the report whether other builds
# were running (the load average is printed).
set -euo pipefail
net=--prefer-offline
[ "${GPUEXT_OFFLINE:-}" = 1 ] && net=--offline
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/gpuext-time-XXXXXX)
echo "machine: $(nproc) cores; GPUs: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | paste -sd';' || true)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

tgz=${1:-}
if [ -z "$tgz" ]; then
  (cd "$repo" && npm pack --pack-destination "$work" --foreground-scripts >"$work/pack.log" 2>&1) ||
    { tail -n 40 "$work/pack.log"; exit 1; }
  tgz=$(ls "$work"/gpuext-*.tgz)
fi
tgz=$(realpath "$tgz")
echo "tarball: $tgz ($(du -h "$tgz" | cut -f1))"

mkdir "$work/app" && cd "$work/app"
echo '{ "name": "app", "version": "1.0.0", "private": true, "type": "module" }' >package.json
start=$(date +%s.%N)
npm install "$tgz" $net --no-audit --no-fund --foreground-scripts >"$work/app-install.log" 2>&1 ||
  { tail -n 40 "$work/app-install.log"; exit 1; }
end=$(date +%s.%N)
grep -E '^gpuext' "$work/app-install.log" || true
echo "install of the tarball into a fresh app: $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"
node --input-type=module -e "import * as gx from 'gpuext';
const d = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
console.log('gx.add on ' + d + ':', String(gx.add(gx.tensor([1, 2, 3], { device: d }), 1)));"

git clone -q "$repo" "$work/clone" && cd "$work/clone"
start=$(date +%s.%N)
npm install $net --no-audit --no-fund --foreground-scripts >"$work/clone-install.log" 2>&1 ||
  { tail -n 40 "$work/clone-install.log"; exit 1; }
end=$(date +%s.%N)
grep -E '^gpuext|built ' "$work/clone-install.log" || true
echo "fresh clone's npm install: $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs: $work"
