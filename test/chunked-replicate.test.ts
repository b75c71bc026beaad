// gx.chunked's replicate (NOTE [ Replicated blocks ] in lib/distributed/chunked.ts):
// every block also held on every other device given, and mapBlocks reading the
// copy on a block's device instead of copying the block there on every call.
// Two devices are cuda:0 and cuda:1 with two GPUs, cuda:0 and the CPU with
// one (mapBlocks' blocks may be on either), the CPU alone without a GPU.
import test from 'ava';

import * as gx from '../lib';
import { REQUIRE_CUDA } from './helpers';
import { createProcessGroup } from '../lib/distributed/group';
import { freePort } from '../lib/cli/run';

const GPUS = gx.cuda.isAvailable() ? gx.cuda.deviceCount() : 0;
const PAIR: readonly gx.DeviceLike[] = GPUS >= 2 ? ['cuda:0', 'cuda:1'] : GPUS === 1 ? ['cuda:0', 'cpu'] : ['cpu'];
const twoDevices = PAIR.length === 2 || REQUIRE_CUDA ? test.serial : test.skip;

const maxAbsDiff = (a: gx.Tensor, b: gx.Tensor): number => gx.tidy(() => gx.max(gx.abs(gx.sub(a, b.to(a.device)))).item() as number);

twoDevices('mapBlocks reads a replicated block where each block runs, the same copy on every call, and the values are right', (t) => {
  t.is(PAIR.length, 2, 'GPUEXT_REQUIRE_CUDA=1 needs a GPU for a second device');
  gx.tidy(() => {
    gx.manualSeed(11);
    const x = gx.randn([12, 8]), y = gx.randn([8]);
    const dx = gx.chunked(x, { chunks: [3, 8], devices: PAIR });
    const dy = gx.chunked(y, { chunks: [8], devices: PAIR, replicate: true });
    t.true(dy.replicated);
    t.is(dy.blocks.length, 1, 'one block, as without replicate');
    t.is(String(dy.blocks[0].device), String(PAIR[0]), 'the block placed as without replicate');
    t.true(String(dy).includes(`copied to ${String(PAIR[1])}`), String(dy));
    const seen: gx.Tensor[][] = [[], []];
    for (let call = 0; call < 2; call++) {
      using r = gx.mapBlocks((xb: gx.Tensor, yb: gx.Tensor) => {
        t.true(yb.device.equals(xb.device), `call ${call}: y's block is on x's block's device (${yb.device} vs ${xb.device})`);
        seen[call].push(yb);
        return gx.add(gx.mul(xb, 2), yb);
      }, dx, dy);
      t.is(maxAbsDiff(r.compute('cpu'), gx.add(gx.mul(x, 2), y)), 0, `call ${call}`);
    }
    // A copy made per call would be a new tensor each time, disposed after the call.
    t.is(seen[0].length, 4);
    seen[0].forEach((yb, k) => t.is(yb, seen[1][k], `block ${k}: the same tensor in both calls`));
    t.true(seen[1].every((yb) => !yb.isDisposed), 'the copies outlive the calls');
    const other = seen[0].filter((yb) => !yb.device.equals(dy.blocks[0].device));
    t.is(other.length, 2, 'two blocks ran on the second device');
    dy.dispose();
    t.true(other.every((yb) => yb.isDisposed), 'dispose frees the copies too');
    dx.dispose();
  });
});

twoDevices('a replicated tensor\'s copies are kept by gx.tidy with it, and compute and rechunk read its blocks', (t) => {
  t.is(PAIR.length, 2, 'GPUEXT_REQUIRE_CUDA=1 needs a GPU for a second device');
  const y = gx.arange(10, { dtype: 'float32' });
  const dy = gx.tidy(() => gx.chunked(y, { chunks: [4], devices: PAIR, replicate: true }));
  t.is(dy.blocks.length, 3);
  t.deepEqual(Array.from(dy.compute('cpu').toArraySync() as Float32Array), Array.from({ length: 10 }, (_, i) => i));
  using re = dy.rechunk([5]);
  t.false(re.replicated, 'a rechunked tensor is not replicated');
  t.deepEqual(Array.from(re.compute('cpu').toArraySync() as Float32Array), Array.from({ length: 10 }, (_, i) => i));
  // Each block's copies are on the other device; the tidy above kept them.
  using r = gx.mapBlocks((b: gx.Tensor) => gx.mul(b, 3), dy);
  t.deepEqual(Array.from(r.compute('cpu').toArraySync() as Float32Array), Array.from({ length: 10 }, (_, i) => 3 * i));
  dy.dispose();
  y.dispose();
});

test('replicate over one device makes no copies; mapBlocks gives the same values', (t) => {
  gx.tidy(() => {
    const x = gx.randn([6, 4]), y = gx.randn([4]);
    const dy = gx.chunked(y, { chunks: [2], devices: ['cpu', 'cpu'], replicate: true });
    t.true(dy.replicated);
    t.notRegex(String(dy), /copied to/);
    using r = gx.mapBlocks((xb: gx.Tensor, yb: gx.Tensor) => gx.sub(xb, yb), gx.chunked(x, { chunks: [3, 2] }), dy);
    t.is(maxAbsDiff(r.compute(), gx.sub(x, y)), 0);
    dy.dispose();
  });
});

test('replicate must be a boolean, and is refused with { group }, naming gx.chunked', async (t) => {
  const y = gx.randn([4]);
  t.throws(() => gx.chunked(y, { chunks: [2], replicate: 1 as unknown as boolean }),
    { instanceOf: TypeError, message: 'gx.chunked: replicate must be a boolean, got number 1' });
  t.throws(() => gx.chunked(y, { chunks: [2], replicate: null as unknown as boolean }), { instanceOf: TypeError, message: /gx\.chunked: replicate must be a boolean, got null/ });
  const port = await freePort();
  const group = await createProcessGroup({ rank: 0, worldSize: 1, masterPort: port, timeoutMs: 20_000 }, 'test');
  try {
    t.throws(() => gx.chunked(y, { chunks: [2], group, replicate: true }), { instanceOf: TypeError, message: /gx\.chunked: replicate copies blocks to this process's devices; with \{ group \}/ });
    using fine = gx.chunked(y, { chunks: [2], group, replicate: false });
    t.is(fine.blocks.length, 2);
  } finally {
    await group.destroy();
  }
  y.dispose();
});
