// unfold and fold at the shapes the kernels' index arithmetic must get right
// (NOTE [ unfold at the memory limit ] in ops/conv/unfold.cu: a thread per
// (image, channel, window) walking its KH*KW positions; fold's magic-number
// divisions by the strides, NOTE [ Division by a run-time constant ]), on
// every device: batch 1, non-square images and kernels, dilation, padding,
// strides, more positions than a thread batches (KH*KW not a multiple of 4),
// many channels, a permuted (non-contiguous) input. unfold against a JS copy
// of torch's definition (exact: unfold copies), fold in float32 against a JS
// reference adding in the kernels' order ((i, j) ascending, float32 rounding
// each step), bit for bit, and on CUDA against the CPU.
import * as gx from '../lib';
import { deviceTest, rng, sameValues } from './helpers';

const F = gx.nn.functional;

interface Geo { n: number; c: number; h: number; w: number; k: [number, number]; d: [number, number]; p: [number, number]; s: [number, number] }

const GEOS: Geo[] = [
  { n: 1, c: 2, h: 9, w: 7, k: [3, 3], d: [1, 1], p: [1, 1], s: [1, 1] },
  { n: 2, c: 3, h: 11, w: 6, k: [2, 3], d: [2, 1], p: [1, 2], s: [2, 3] },
  { n: 3, c: 1, h: 12, w: 13, k: [7, 7], d: [1, 1], p: [3, 3], s: [2, 2] },   // the conv bench's stem geometry, small
  { n: 1, c: 300, h: 4, w: 5, k: [2, 2], d: [1, 1], p: [0, 0], s: [2, 1] },   // many channels
  { n: 2, c: 2, h: 5, w: 17, k: [1, 5], d: [1, 3], p: [0, 4], s: [1, 2] },
  { n: 2, c: 4, h: 26, w: 26, k: [2, 2], d: [1, 1], p: [0, 0], s: [2, 2] },   // max pooling's windows
  { n: 1, c: 3, h: 8, w: 9, k: [3, 5], d: [3, 2], p: [2, 0], s: [3, 1] },
];

const grid = (g: Geo): [number, number] => [
  Math.floor((g.h + 2 * g.p[0] - g.d[0] * (g.k[0] - 1) - 1) / g.s[0]) + 1,
  Math.floor((g.w + 2 * g.p[1] - g.d[1] * (g.k[1] - 1) - 1) / g.s[1]) + 1,
];

/** torch.nn.functional.unfold of a contiguous (N, C, H, W) x, row-major. */
function unfoldReference(x: ArrayLike<number>, g: Geo): number[] {
  const [oh, ow] = grid(g), kk = g.k[0] * g.k[1], L = oh * ow;
  const out = new Array<number>(g.n * g.c * kk * L).fill(0);
  for (let b = 0; b < g.n; b++) for (let c = 0; c < g.c; c++) for (let i = 0; i < g.k[0]; i++) for (let j = 0; j < g.k[1]; j++) {
    for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) {
      const hh = y * g.s[0] - g.p[0] + i * g.d[0], ww = xx * g.s[1] - g.p[1] + j * g.d[1];
      const inside = hh >= 0 && hh < g.h && ww >= 0 && ww < g.w;
      out[((b * g.c + c) * kk + i * g.k[1] + j) * L + y * ow + xx] = inside ? x[((b * g.c + c) * g.h + hh) * g.w + ww] : 0;
    }
  }
  return out;
}

/** fold in float32, each output adding its windows with (i, j) ascending, as the kernels do. */
function foldReference(cols: Float32Array, g: Geo): number[] {
  const [oh, ow] = grid(g), kk = g.k[0] * g.k[1], L = oh * ow;
  const out: number[] = [];
  for (let b = 0; b < g.n; b++) for (let c = 0; c < g.c; c++) for (let y = 0; y < g.h; y++) for (let x = 0; x < g.w; x++) {
    let acc = 0;
    for (let i = 0; i < g.k[0]; i++) for (let j = 0; j < g.k[1]; j++) {
      const hh = y + g.p[0] - i * g.d[0], ww = x + g.p[1] - j * g.d[1];
      if (hh < 0 || ww < 0 || hh % g.s[0] !== 0 || ww % g.s[1] !== 0) continue;
      const wy = hh / g.s[0], wx = ww / g.s[1];
      if (wy >= oh || wx >= ow) continue;
      acc = Math.fround(acc + cols[((b * g.c + c) * kk + i * g.k[1] + j) * L + wy * ow + wx]);
    }
    out.push(acc);
  }
  return out;
}

const opts = (g: Geo): gx.nn.UnfoldOptions => ({ dilation: g.d, padding: g.p, stride: g.s });

deviceTest('unfold equals torch\'s definition exactly (batch 1, non-square, dilation, padding, stride, many channels)', (t, d) => {
  GEOS.forEach((g, gi) => gx.tidy(() => {
    const r = rng(100 + gi);
    const xv = Array.from({ length: g.n * g.c * g.h * g.w }, () => 2 * r() - 1);
    const x = gx.tensor(xv, { dtype: 'float64', device: d, shape: [g.n, g.c, g.h, g.w] });
    const u = F.unfold(x, g.k, opts(g));
    const [oh, ow] = grid(g);
    t.deepEqual([...u.shape], [g.n, g.c * g.k[0] * g.k[1], oh * ow], `geometry ${gi}: shape`);
    sameValues(t, u.toArraySync() as Float64Array, unfoldReference(xv, g), `geometry ${gi}`);
  }));
});

deviceTest('unfold of a permuted (non-contiguous) input equals unfold of its contiguous copy', (t, d) => {
  gx.tidy(() => {
    const r = rng(7);
    const g = GEOS[1];
    const nhwc = gx.tensor(Array.from({ length: g.n * g.h * g.w * g.c }, () => 2 * r() - 1), { device: d, shape: [g.n, g.h, g.w, g.c] });
    const x = gx.permute(nhwc, [0, 3, 1, 2]);
    const copy = gx.tensor(Array.from(x.toArraySync() as Float32Array), { device: d, shape: [g.n, g.c, g.h, g.w] });
    sameValues(t, F.unfold(x, g.k, opts(g)).toArraySync() as Float32Array, F.unfold(copy, g.k, opts(g)).toArraySync() as Float32Array, 'permuted');
    sameValues(t, F.unfold(x, g.k, opts(g)).toArraySync() as Float32Array, unfoldReference(Array.from(copy.toArraySync() as Float32Array), g), 'reference');
  });
});

deviceTest('fold in float32 adds in one order at every geometry: bit for bit the reference (and CUDA the CPU)', (t, d) => {
  GEOS.forEach((g, gi) => gx.tidy(() => {
    const r = rng(200 + gi);
    const [oh, ow] = grid(g);
    const shape = [g.n, g.c * g.k[0] * g.k[1], oh * ow];
    const cv = Float32Array.from({ length: shape[0] * shape[1] * shape[2] }, () => 2 * r() - 1);
    const cols = gx.tensor(cv, { device: d, shape });
    const f = F.fold(cols, [g.h, g.w], g.k, opts(g));
    t.deepEqual([...f.shape], [g.n, g.c, g.h, g.w]);
    const got = Array.from(f.toArraySync() as Float32Array);
    sameValues(t, got, foldReference(cv, g), `geometry ${gi}`);
    if (d !== 'cpu') sameValues(t, got, Array.from(F.fold(cols.cpu(), [g.h, g.w], g.k, opts(g)).toArraySync() as Float32Array), `geometry ${gi} on the CPU`);
  }));
});
