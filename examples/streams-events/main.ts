// The CuPy course's streams example: two independent kernels on two streams
// run concurrently; then stream2 waits only for an event recorded between
// stream1's two kernels, not for all of stream1.
// Build and run (from the repository root):
//   npx gpuext build --config examples/streams-events/setup.config.json
//   npx tsc -p examples/streams-events && node examples/streams-events/main.js
import * as gx from 'gpuext';

import { elementwiseComputation, squaredDiff } from './build/fused';

async function main(): Promise<void> {
  if (!gx.cuda.isAvailable()) {
    console.log(`streams need a GPU (${gx.cuda.unavailableReason()}); nothing to show on the CPU`);
    return;
  }
  const n = 1 << 20;
  using x = gx.linspace(0.1, 3, n, { device: 'cuda' });
  using y = gx.linspace(-2, 2, n, { device: 'cuda' });
  using z = gx.linspace(1, 5, n, { device: 'cuda' });

  const stream1 = new gx.Stream();
  const stream2 = new gx.Stream();
  const syncPoint = new gx.Event();

  let first!: gx.Tensor;
  let second!: gx.Tensor;
  gx.withStream(stream1, () => {
    first = elementwiseComputation(x, y, z);
    syncPoint.record(stream1);           // stream2 needs `first`, not what follows
    second = elementwiseComputation(z, y, x);
  });
  let diff!: gx.Tensor;
  gx.withStream(stream2, () => {
    stream2.waitEvent(syncPoint);
    diff = squaredDiff(first, y);
  });
  // `first` was allocated on stream1 and is read on stream2.
  first.recordStream(stream2);
  await Promise.all([stream1.done(), stream2.done()]);

  // Check against the CPU implementation (tidy frees the temporaries).
  using ref = gx.tidy(() => squaredDiff(elementwiseComputation(x.cpu(), y.cpu(), z.cpu()), y.cpu()));
  const got = diff.toArraySync() as Float32Array;
  const want = ref.toArraySync() as Float32Array;
  let maxErr = 0;
  for (let i = 0; i < n; i++) maxErr = Math.max(maxErr, Math.abs(got[i] - want[i]));
  console.log(`squared_diff on stream2 after the event: ${n} values, max |cuda - cpu| = ${maxErr.toExponential(2)}`);
  for (const t of [first, second, diff]) t.dispose();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
