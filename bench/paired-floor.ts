// A one-element call timed side by side with the launch floor measured in the
// same process: native.launchFloor, an empty 4-argument kernel launched from
// C++ with the arguments `tensors` by address and 1. Each is timed in batches
// of `batch` closed by a synchronize, in rotation over 9 rounds, so neither
// always runs first or on the host's quieter moment (the floor of one lent
// host moved 3.3-4.4 µs within minutes). bench/calls.bench.ts (the built-in
// op) and bench/extension.bench.ts (addGpu) report their call against it.
import * as gx from '../lib';
import { native } from '../lib/core/native';
import { STAGED_ARGS, stagingArea } from '../lib/core/staging';
import { median, perCallNs, rotatedMedians } from './util';

/**
 * µs per call of `call` and of the floor, each the median over the rounds; `alsoUs`: more figures (µs per call,
 * each a function that measures one batch and says it) timed in the same rotation, their medians in `also`.
 */
export function pairedWithFloor(call: () => void, tensors: readonly gx.Tensor[], sync: () => void, batch = 1_000,
  alsoUs: readonly (() => number)[] = []): { call: number; floor: number; also: number[] } {
  const empty4 = new gx.RawKernel('extern "C" __global__ void empty4(const float* a, const float* b, float* c, int n) {}', 'empty4');
  const f4 = empty4.function(tensors[0].device);
  const floorUs = (): number => {
    stagingArea().set([...tensors.map((t) => t.address('paired-floor')), 1], STAGED_ARGS);
    return median(Array.from(native.launchFloor(f4, 4, batch)));
  };
  floorUs();  // its first batches load the kernel and warm the path
  const callUs = (): number => perCallNs(call, 4 * batch, batch, { sync }) / 1e3;
  const [floor, c, ...also] = rotatedMedians([floorUs, callUs, ...alsoUs], (m) => m(), 9);
  return { call: c, floor, also };
}
