// The thin SVD of a tall-skinny matrix chunked along its rows (TSQR):
//   1. each block A_k = Q_k R_k on its device (R_k is at most n x n);
//   2. the R_k stacked on one device (across ranks: broadcast by their
//      owners, so every rank has them), M = [R_1; R_2; ...], and M's SVD,
//      M = U_m diag(S) Vh, small (blocks x n rows, n columns);
//   3. U's blocks Q_k U_m[rows of R_k], each on its block's device.
// Then A = U diag(S) Vh, U has orthonormal columns, and the work that grows
// with the rows (step 1 and 3) runs where the blocks are, at once on every
// device. Every rank computes the same small SVD from the same R's.
//
// NOTE [ The small SVD of float32 R's ]
// Step 2's SVD of M (n x n to blocks x n) cost more than step 1 on the
// H200 (gesvdj of 1000 x 1000 float32: 51 ms; the Householder QR of a block
// of 50000 x 1000: 32 ms). For float32 M it is done instead through the
// eigendecomposition of M^T M formed in float64 (syevd of 1000 x 1000:
// 11 ms): S^2 and V are then exact to float64's rounding scaled by cond(M)^2,
// and U_m = M V diag(1/S), formed in float64, orthonormal to the same. While
// cond(M) <= 1e4 that is below float32's rounding (1e-16 * 1e8 = 1e-8),
// the rounding the input already carries; so the path checks the
// eigenvalues' spread and takes gesvdj on M when it is larger (a
// rank-deficient or ill-conditioned matrix), and for float64 matrices.
//
// NOTE [ The float32 SVD by the float64 Gram matrix ]
// For a float32 matrix the steps above are skipped when A is well
// conditioned: each block's Gram matrix A_k^T A_k, formed in float64 on its
// device (a cast and one DGEMM: 2 ms for 50000 x 1000 on the H200, against
// 32 ms for the block's Householder QR), summed (across ranks: one
// all-reduce of n x n), its eigendecomposition V diag(S^2) V^T in float64,
// and U's blocks A_k V diag(1/S) in float64, rounded to float32 at the end.
// S and V are exact to float64's rounding scaled by cond(A)^2, U orthonormal
// to the same: while cond(A) <= 1e4 that is below float32's rounding, as for
// the small SVD above, and the same spread check sends any other matrix
// (rank-deficient, ill-conditioned) down the TSQR path. { gram: false }
// always takes TSQR.
import { booleanOption } from '../core/options';
import type { Device } from '../core/device';
import { cat } from '../ops/layout/layout';
import { matmul } from '../ops/linalg/matmul';
import { svd, type SvdFields } from '../ops/linalg/svd';
import { qr } from '../ops/linalg/qr';
import { eigh } from '../ops/linalg/symmetric';
import { flip } from '../ops/layout/reorder';
import { astype } from '../ops/elementwise/functions';
import { add, div, sqrt } from '../generated/elementwise';
import { empty } from '../ops/creation/creation';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import type { ChunkedTensor, RankPlacement } from './chunked';

export interface ChunkedSvd {
  /** Chunked like the matrix's rows (one block of k columns); across ranks, this rank's blocks. */
  U: ChunkedTensor;
  S: Tensor;
  Vh: Tensor;
}

/** What the SVD computes: U's blocks in row order (undefined where another rank holds one), S and Vh. */
export interface SvdParts {
  blocks: (Tensor | undefined)[];
  S: Tensor;
  Vh: Tensor;
}

/** How each block of rows is reduced to a small R (step 1). */
export interface ChunkedSvdOptions {
  /**
   * 'qr' (default): Householder QR, A_k = Q_k R_k (cuSOLVER geqrf + orgqr on
   * CUDA, asynchronous); 'svd': the block's own thin SVD, A_k = U_k (S_k Vh_k),
   * so Q_k = U_k and R_k = diag(S_k) Vh_k. Both give A's SVD to rounding;
   * which is faster depends on the solver and the block's shape.
   */
  factor?: 'qr' | 'svd';
  /**
   * For float32 (default true): the SVD through the float64 Gram matrix when
   * A is well conditioned (NOTE [ The float32 SVD by the float64 Gram
   * matrix ]), TSQR otherwise; false: always TSQR.
   */
  gram?: boolean;
}

type Factor = (block: Tensor) => { Q: Tensor; R: Tensor };

function factorOf(opts: ChunkedSvdOptions, fn: string): Factor {
  // Checked here, with the factor, for both entry points: { gram: 'false' } read as true.
  booleanOption(fn, 'gram', opts.gram, true);
  const how = opts.factor ?? 'qr';
  if (how === 'qr') return (block) => qr(block, { mode: 'reduced' });
  if (how !== 'svd') throw new TypeError(`${fn}: factor must be 'qr' or 'svd', got ${String(how as unknown)}`);
  return (block) => {
    const { U, S, Vh } = svd(block, { fullMatrices: false });
    using s = S.reshape([-1, 1]);
    const R = Vh.mul(s);
    S.dispose();
    Vh.dispose();
    return { Q: U, R };
  };
}

function checkTallSkinny(c: ChunkedTensor, fn: string): void {
  if (c.ndim !== 2 || c.grid[1] !== 1) {
    throw new RangeError(`${fn}: needs a 2-d matrix chunked along its rows only (one block of columns), got block grid [${c.grid.join(', ')}]`);
  }
}

/** `t` on `device` (itself when already there; a copy otherwise, the original disposed). */
function moveTo(t: Tensor, device: Device, fn: string): Tensor {
  if (t.device.equals(device)) return t;
  const moved = t.toDevice(device, false, fn);
  t.dispose();
  return moved;
}

/** The largest cond(M)^2 for which the float64 Gram path is as exact as float32 (NOTE [ The small SVD of float32 R's ]). */
const GRAM_MAX_SPREAD = 1e8;

/**
 * S (float64, descending), V (float64, its columns) and W = V diag(1/S) from
 * a float64 Gram matrix G = A^T A, or undefined when A is not well enough
 * conditioned for them to be exact to float32 (GRAM_MAX_SPREAD).
 */
function fromGram(g: Tensor): { s64: Tensor; v: Tensor; w: Tensor } | undefined {
  const n = g.shape[0];
  return tidy(() => {
    const { eigenvalues, eigenvectors } = eigh(g);
    const ev = eigenvalues.toArraySync() as Float64Array;  // ascending; n doubles (gesvdj also reads its status back)
    if (!(ev[0] > 0 && ev[n - 1] <= ev[0] * GRAM_MAX_SPREAD)) return undefined;
    const s64 = sqrt(flip(eigenvalues, 0));
    const v = flip(eigenvectors, 1);
    return { s64, v, w: div(v, s64) };
  });
}

/** S and Vh in float32 from fromGram's S and V. */
const svdTail = (s64: Tensor, v: Tensor): { S: Tensor; Vh: Tensor } =>
  tidy(() => ({ S: astype(s64, 'float32'), Vh: astype(v.mT.contiguous(), 'float32') }));

/** The thin SVD of the stacked R's: by the float64 Gram matrix for float32 when well conditioned, else gesvdj. */
export function smallSvd(m: Tensor): SvdFields {
  const [rows, n] = m.shape;
  if (m.dtype !== 'float32' || rows < n || n === 0) return svd(m, { fullMatrices: false });
  const viaGram = tidy(() => {
    const m64 = astype(m, 'float64');
    const f = fromGram(matmul(m64.mT, m64));
    return f === undefined ? undefined : { U: astype(matmul(m64, f.w), 'float32'), ...svdTail(f.s64, f.v) };
  });
  return viaGram ?? svd(m, { fullMatrices: false });
}

/** Whether the Gram path applies to c's dtype and shape (the spread is checked later, on the Gram matrix). */
const gramApplies = (c: ChunkedTensor, opts: ChunkedSvdOptions): boolean =>
  (opts.gram ?? true) && c.dtype === 'float32' && c.shape[0] >= c.shape[1] && c.shape[1] > 0;

/** Each held block's Gram matrix in float64 on its device, summed on `home` (zeros when this rank holds none). */
function gramOf(blocks: readonly (Tensor | undefined)[], n: number, home: Device, fn: string): Tensor {
  return tidy(() => {
    let sum: Tensor | undefined;
    for (const b of blocks) {
      if (b === undefined) continue;
      // One block's float64 copy at a time (twice the block's bytes), freed before the next.
      const g = tidy(() => {
        const b64 = astype(b, 'float64');
        return moveTo(matmul(b64.mT, b64), home, fn);
      });
      sum = sum === undefined ? g : add(sum, g);
    }
    return sum ?? empty([n, n], { dtype: 'float64', device: home }).fill_(0);
  });
}

/** The SVD from a summed Gram matrix (which it frees), or undefined when A is not well conditioned enough. */
function fromGramSum(g: Tensor, blocks: readonly (Tensor | undefined)[], fn: string): SvdParts | undefined {
  let f: ReturnType<typeof fromGram>;
  try {
    f = fromGram(g);
  } finally {
    g.dispose();
  }
  return f === undefined ? undefined : gramFinish(blocks, f, fn);
}

/** U's blocks A_k W (float64, rounded to float32) where this process holds A_k; S and Vh. */
function gramFinish(blocks: readonly (Tensor | undefined)[], f: { s64: Tensor; v: Tensor; w: Tensor }, fn: string): SvdParts {
  // Each block cast to float64 again (gramOf freed its copy, to hold one block's at a time).
  const out = blocks.map((b) => b === undefined ? undefined : tidy(() => {
    const w = f.w.device.equals(b.device) ? f.w : f.w.toDevice(b.device, false, fn);
    return astype(matmul(astype(b, 'float64'), w), 'float32');
  }));
  const { S, Vh } = svdTail(f.s64, f.v);
  for (const t of [f.s64, f.v, f.w]) t.dispose();
  return { blocks: out, S, Vh };
}

/**
 * Step 2 and 3: the SVD of the stacked R's (on `home`), then U's blocks from
 * the Q's this process holds. `gramFailed`: A's Gram matrix was too spread,
 * so M's (cond(M) = cond(A)) is too: straight to gesvdj.
 */
function finish(c: ChunkedTensor, Rs: Tensor[], Qs: readonly (Tensor | undefined)[], fn: string, gramFailed: boolean): SvdParts {
  const m = cat(Rs, 0);
  Rs.forEach((r) => r.dispose());
  const { U: um, S, Vh } = gramFailed ? svd(m, { fullMatrices: false }) : smallSvd(m);
  m.dispose();
  let row = 0;
  const blocks = Qs.map((q, k) => {
    const rows = Math.min(c.chunks[0][k], c.shape[1]);
    const at = row;
    row += rows;
    if (q === undefined) return undefined;
    using part = um.narrow(0, at, rows);
    using onDevice = part.device.equals(q.device) ? part.contiguous() : part.toDevice(q.device, false, fn);
    const u = matmul(q, onDevice);
    q.dispose();
    return u;
  });
  um.dispose();
  return { blocks, S, Vh };
}

/** TSQR of a chunked tensor this process holds: the R's stacked on the first block's device. */
export function svdLocal(c: ChunkedTensor, opts: ChunkedSvdOptions = {}): SvdParts {
  const fn = 'ChunkedTensor.svd';
  checkTallSkinny(c, fn);
  const factor = factorOf(opts, fn);
  const home = c.blocks[0].device;
  const gram = gramApplies(c, opts);
  if (gram) {
    const viaGram = fromGramSum(gramOf(c.blocks, c.shape[1], home, fn), c.blocks, fn);
    if (viaGram !== undefined) return viaGram;
  }
  const parts = c.blocks.map(factor);
  return finish(c, parts.map((p) => moveTo(p.R, home, fn)), parts.map((p) => p.Q), fn, gram);
}

/** TSQR of a chunked tensor spread over ranks: each R broadcast by its owner, the small SVD on every rank. */
export async function svdOverRanks(c: ChunkedTensor, p: RankPlacement, opts: ChunkedSvdOptions = {}): Promise<SvdParts> {
  const fn = 'ChunkedTensor.svdAsync';
  checkTallSkinny(c, fn);
  const factor = factorOf(opts, fn);
  const home = c.home(fn);
  const n = c.shape[1];
  const gram = gramApplies(c, opts);
  if (gram) {
    // Every rank gets the same sum, so every rank takes the same path.
    const held = c.chunks[0].map((_, k) => c.blockAt(k));
    const g = gramOf(held, n, home, fn);
    try {
      await p.group.allReduce(g, 'sum');
    } catch (e) {
      g.dispose();
      throw e;
    }
    const viaGram = fromGramSum(g, held, fn);
    if (viaGram !== undefined) return viaGram;
  }
  const Qs: (Tensor | undefined)[] = [];
  const Rs: Tensor[] = [];
  try {
    for (let k = 0; k < c.chunks[0].length; k++) {
      const block = c.blockAt(k);
      let R: Tensor;
      if (block !== undefined) {
        const f = factor(block);
        Qs.push(f.Q);
        R = moveTo(f.R.contiguous(), home, fn);
        if (R !== f.R) f.R.dispose();
      } else {
        Qs.push(undefined);
        R = empty([Math.min(c.chunks[0][k], n), n], { dtype: c.dtype, device: home });
      }
      Rs.push(R);
      await p.group.broadcast(R, p.owners[k]);
    }
  } catch (e) {
    for (const t of [...Rs, ...Qs]) if (t !== undefined && !t.isDisposed) t.dispose();
    throw e;
  }
  return finish(c, Rs, Qs, fn, gram);
}
