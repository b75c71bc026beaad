// GPU time per op of the GLM evaluation's elementwise and reduction ops at
// 10^6 float32 elements ([10^6, 1], as the regression's eta): batches of 50
// calls closed by one synchronize, median of 15 batches, with the bandwidth
// each reaches. For spotting an op far from the memory bound.
//   node dist/bench/op-times.js
import * as gx from '../lib';

function main(): void {
  if (!gx.cuda.isAvailable()) { console.log('op-times: skipped (no CUDA device)'); return; }
  const n = 1_000_000;
  const x = gx.randn([n, 1], { device: 'cuda' });
  const y = gx.randn([n, 1], { device: 'cuda' });
  const s = gx.tensor(0.5, { device: 'cuda' });
  const big = gx.randn([n, 101], { device: 'cuda' });
  const b = gx.randn([101, 1], { device: 'cuda' });
  const ops: [string, () => gx.Tensor, number][] = [
    ['add x + y', () => gx.add(x, y), 12],
    ['mul x * 2', () => gx.mul(x, 2), 8],
    ['div(expand(0-d), n)', () => gx.div(s.reshape(1, 1).expand(n, 1), n), 4],
    ['neg(expand(0-d))', () => gx.neg(s.reshape(1, 1).expand(n, 1)), 4],
    ['softplus', () => gx.softplus(x), 8],
    ['sigmoid', () => gx.sigmoid(x), 8],
    ['gt(x, 20)', () => gx.gt(x, 20), 5],
    ['where(c, 1, x)', () => gx.where(gx.gt(x, 20), 1, x), 9],
    ['mean [n,1]', () => gx.mean(x), 4],
    ['sum [n,1]', () => gx.sum(x), 4],
    ['x.contiguous() (no-op)', () => x.contiguous(), 0],
    ['matmul [n,101]@[101,1]', () => gx.matmul(big, b), 404],
    ['matmul [n,101].T@[n,1]', () => gx.matmul(big.T, x), 408],
  ];
  console.log('== op times at 10^6 float32 (median of 15 batches of 50)');
  for (const [name, f, mb] of ops) {
    for (let i = 0; i < 20; i++) gx.tidy(() => { f(); });
    gx.cuda.synchronize();
    const per: number[] = [];
    for (let r = 0; r < 15; r++) {
      const t0 = performance.now();
      gx.tidy(() => { for (let i = 0; i < 50; i++) f(); });
      gx.cuda.synchronize();
      per.push((performance.now() - t0) * 1e3 / 50);
    }
    per.sort((p, q) => p - q);
    const us = per[7];
    console.log(`  ${name.padEnd(28)} ${us.toFixed(1).padStart(8)} us${mb > 0 ? `  ${(mb * 1e6 / (us * 1e-6) / 1e9).toFixed(0)} GB/s` : ''}`);
  }
  for (const t of [x, y, s, big, b]) t.dispose();
}

main();
