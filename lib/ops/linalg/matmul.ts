// gx.matmul, torch.matmul's semantics: 1-d operands are vectors (a dot
// product, matrix-vector, vector-matrix), and the dims before the last two are
// batch dims that broadcast. The op itself (ops/linalg/matmul.h) takes
// [batch or 1, m, k] @ [batch or 1, k, n] -> [batch, m, n]. On CUDA the
// operands are contiguous: one whose batch is one matrix is passed once
// (stride 0), one whose batch dims already are the result's and contiguous as
// a view, one whose matrices are transposed contiguous ones (x.mT) as that
// contiguous transpose with the op's trans flag, and only the rest is
// materialized. On the CPU any operand whose batch dims collapse into one
// stride goes as a strided view (transposes and slices included). CUDA goes
// through cuBLAS (float32, with TF32 tensor cores when allowed; float64;
// float16 and bfloat16 accumulating in float); the CPU through a system BLAS
// when one is installed, else a built-in kernel (gx.backends() says which),
// and is the reference.
import { allocate } from '../creation/creation';
import { FLOAT_DTYPES, type DType } from '../../generated/dtypes';
import * as ops from '../../generated/ops';
import { broadcastShapes, equalShapes, formatShape, numelOf } from '../../core/shape';
import { recorders, shouldRecord } from '../../tape/graph';
import { copyValues, Tensor } from '../../core/tensor';
import { optionKeys, tooManyArguments } from '../../core/options';
import { checkTensor, optionsOf } from '../common';
import { namedForCaller } from '../library';
import { overlapsInputs } from '../overlap';


/** matmul takes the floating dtypes. */
const MATMUL_DTYPES: readonly DType[] = FLOAT_DTYPES;

/** 'highest': float32 matmuls in full float32; 'high': TF32 tensor cores (10-bit mantissa inputs), like torch. */
export type MatmulPrecision = 'highest' | 'high';

let float32Precision: MatmulPrecision = 'highest';

/** Sets whether float32 matmuls may use TF32 tensor cores ('high'), like torch.set_float32_matmul_precision. */
export function setFloat32MatmulPrecision(p: MatmulPrecision): void {
  if (arguments.length > 1) tooManyArguments('gx.setFloat32MatmulPrecision', '(p)', arguments.length - 1, arguments[1]);
  if (p !== 'highest' && p !== 'high') throw new TypeError(`gx.setFloat32MatmulPrecision: expected 'highest' or 'high', got ${String(p)}`);
  float32Precision = p;
}

export function getFloat32MatmulPrecision(): MatmulPrecision {
  if (arguments.length > 0) tooManyArguments('gx.getFloat32MatmulPrecision', '()', arguments.length, arguments[0]);
  return float32Precision;
}

/** Whether float32 products may use TF32 when the call does not say: precision 'high' (matmul, the cuDNN convolutions). @internal */
export function tf32ByDefault(): boolean {
  return float32Precision === 'high';
}

export interface MatmulOptions {
  /** float32 only: allow TF32 tensor cores for this call (default: gx.getFloat32MatmulPrecision() === 'high'). */
  allowTf32?: boolean;
  /** Write the result here (its shape and dtype must be the result's, contiguous). */
  out?: Tensor;
}

const MATMUL_KEYS = optionKeys<MatmulOptions>({ allowTf32: true, out: true });

/** `t` as a new [b or 1, rows, cols] tensor for the op: a view when its layout allows, else a contiguous copy. */
function asBatch3(t: Tensor, batch: readonly number[], rows: number, cols: number): Tensor {
  if (numelOf(t.shape.slice(0, -2)) === 1) {  // one matrix for every batch
    if (t.isContiguous()) return t.reshape([1, rows, cols]);
    using c = t.contiguous();
    return c.reshape([1, rows, cols]);
  }
  const full = [...batch, rows, cols];
  if (t.isContiguous() && t.ndim === full.length && t.shape.every((s, i) => s === full[i])) {
    return t.reshape([numelOf(batch), rows, cols]);
  }
  const lead = full.length - t.ndim;
  const strides = full.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead]));
  using expanded = t.asStrided(full, strides, t.storageOffset);
  using c = expanded.contiguous();
  return c.reshape([numelOf(batch), rows, cols]);
}

/**
 * CPU only: `t` as a [b or 1, rows, cols] view with its own strides, no copy
 * (the CPU op reads any layout: NOTE [ Strided matmul operands on the CPU ] in
 * ops/linalg/matmul_cpu.cpp), or undefined when its batch dims do not collapse
 * into one stride.
 */
function stridedBatch3(t: Tensor, batch: readonly number[], rows: number, cols: number): Tensor | undefined {
  const full = [...batch, rows, cols];
  const lead = full.length - t.ndim;
  const strides = full.map((_, d) => (d < lead || t.shape[d - lead] === 1 ? 0 : t.strides[d - lead]));
  const dims = batch.map((size, d) => [size, strides[d]]).filter(([size]) => size !== 1);
  for (let i = dims.length - 1; i > 0; i--) {
    if (dims[i - 1][1] !== dims[i][1] * dims[i][0]) return undefined;
  }
  const batchStride = dims.length > 0 ? dims[dims.length - 1][1] : 0;
  const b = batchStride === 0 ? 1 : numelOf(batch);  // stride 0: one matrix for every batch
  return t.asStrided([b, rows, cols], [batchStride, strides[full.length - 2], strides[full.length - 1]], t.storageOffset);
}

/**
 * Matrix product with broadcasting batch dims, like torch.matmul.
 * @example
 * const c = gx.matmul(a, b);                       // [.., m, k] @ [.., k, n]
 * const y = gx.matmul(w, x, { allowTf32: true });  // float32 on tensor cores
 */
export function matmul(a: Tensor, b: Tensor, options?: MatmulOptions | null): Tensor {
  if (arguments.length > 3) tooManyArguments('gx.matmul', '(a, b, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.matmul';
  const opts = optionsOf<MatmulOptions>(options, fn, MATMUL_KEYS);
  checkTensor(a, fn, 'a');
  checkTensor(b, fn, 'b');
  if (a.ndim === 0 || b.ndim === 0) {
    throw new RangeError(`${fn}: both operands need at least 1 dimension, got ${formatShape(a.shape)} and ${formatShape(b.shape)}`);
  }
  if (a.dtype !== b.dtype) throw new TypeError(`${fn}: dtypes differ: ${a.dtype} ${formatShape(a.shape)} and ${b.dtype} ${formatShape(b.shape)}`);
  if (!MATMUL_DTYPES.includes(a.dtype)) {
    throw new TypeError(`${fn}: dtype ${a.dtype} is not supported; expected one of ${MATMUL_DTYPES.join(', ')}`);
  }
  if (!a.device.equals(b.device)) throw new Error(`${fn}: operands are on ${a.device} and ${b.device}; move them to one device`);
  // Vectors become matrices, and their dim leaves the result.
  const aShape = a.ndim === 1 ? [1, a.shape[0]] : a.shape;
  const bShape = b.ndim === 1 ? [b.shape[0], 1] : b.shape;
  const [m, k] = aShape.slice(-2);
  const [k2, n] = bShape.slice(-2);
  if (k !== k2) throw new RangeError(`${fn}: inner dimensions differ: ${formatShape(a.shape)} @ ${formatShape(b.shape)} (${k} vs ${k2})`);
  const batch = broadcastShapes([aShape.slice(0, -2), bShape.slice(0, -2)], fn);
  const resultShape = [...batch, ...(a.ndim === 1 ? [] : [m]), ...(b.ndim === 1 ? [] : [n])];
  const allowTf32 = opts.allowTf32 ?? tf32ByDefault();
  const out = opts.out;
  if (out !== undefined) {
    checkTensor(out, fn, 'out');
    if (out.dtype !== a.dtype || !out.isContiguous() || !equalShapes(out.shape, resultShape) || !out.device.equals(a.device)) {
      throw new TypeError(`${fn}: out must be a contiguous ${a.dtype} ${formatShape(resultShape)} tensor on ${a.device}, ` +
        `got ${out.dtype} ${formatShape(out.shape)} on ${out.device}${out.isContiguous() ? '' : ' (not contiguous)'}`);
    }
  }
  // An out that shares memory with a or b gets the product through a temporary (NOTE [ Overlapping outputs ]).
  const viaTemporary = out !== undefined && overlapsInputs(out, [a, b], false);
  const result = out === undefined || viaTemporary ? allocate(resultShape, a.dtype, a.device, undefined, fn) : out;
  try {
    multiply(a, b, aShape, bShape, batch, allowTf32, result, fn);
    if (viaTemporary) copyValues(out, result, fn);
  } catch (e) {
    if (result !== out) result.dispose();
    throw namedForCaller(e, fn);
  }
  if (viaTemporary) result.dispose();
  if (out === undefined && shouldRecord(a, b)) recorders.matmul?.(a, b, result);
  return out ?? result;
}

/** result = a @ b, with a, b seen as [batch.., m, k] and [batch.., k, n] (aShape, bShape). */
function multiply(a: Tensor, b: Tensor, aShape: readonly number[], bShape: readonly number[], batch: readonly number[],
  allowTf32: boolean, result: Tensor, fn: string): void {
  const cpu = a.device.type === 'cpu';
  if (a.ndim === 2 && b.ndim === 2) {
    // The common case: matrices, contiguous or (on CUDA) transposed views of contiguous ones, which cuBLAS reads
    // with a transpose flag instead of a copy (X^T @ g of a tall X, as least squares' gradients are, copied all of X).
    using at = cpu || a.isContiguous() ? undefined : transposedContiguous(a);
    using bt = cpu || b.isContiguous() ? undefined : transposedContiguous(b);
    if (cpu || ((a.isContiguous() || at !== undefined) && (b.isContiguous() || bt !== undefined))) {
      ops.matmul(fn, {
        self: (at ?? a).handle(fn), other: (bt ?? b).handle(fn), allowTf32, transSelf: at !== undefined, transOther: bt !== undefined,
        out: result.handle(fn),
      });
      return;
    }
  }
  const [m, k] = aShape.slice(-2);
  const n = bShape[bShape.length - 1];
  using av = a.ndim === 1 ? a.reshape(aShape) : undefined;
  using bv = b.ndim === 1 ? b.reshape(bShape) : undefined;
  // CUDA: a batch of transposed contiguous matrices (x.mT, einsum's 'bij,bkj->bik') goes as its transpose with a flag, uncopied.
  using at = cpu ? undefined : transposedBatch3(av ?? a, batch, m, k);
  using bt = cpu ? undefined : transposedBatch3(bv ?? b, batch, k, n);
  using a3t = at ?? (cpu ? stridedBatch3(av ?? a, batch, m, k) : undefined) ?? asBatch3(av ?? a, batch, m, k);
  using b3t = bt ?? (cpu ? stridedBatch3(bv ?? b, batch, k, n) : undefined) ?? asBatch3(bv ?? b, batch, k, n);
  using o3 = result.reshape([numelOf(batch), m, n]);
  ops.matmul(fn, {
    self: a3t.handle(fn), other: b3t.handle(fn), allowTf32, transSelf: at !== undefined, transOther: bt !== undefined, out: o3.handle(fn),
  });
}

/**
 * CUDA: a non-contiguous `t` (seen as [batch.., rows, cols]) whose last two
 * dims swapped are contiguous, as [b or 1, cols, rows] (the matrices'
 * transposes, for the op's trans flag): one matrix for every batch, or the
 * whole batch; else undefined (asBatch3 copies it).
 */
function transposedBatch3(t: Tensor, batch: readonly number[], rows: number, cols: number): Tensor | undefined {
  if (t.ndim < 2 || t.isContiguous()) return undefined;
  const d = t.ndim;
  const one = numelOf(t.shape.slice(0, -2)) === 1;
  if (!one && !(t.ndim === batch.length + 2 && t.shape.every((s, i) => i >= d - 2 || s === batch[i]))) return undefined;
  const shape = [...t.shape.slice(0, -2), cols, rows];
  const strides = [...t.strides.slice(0, -2), t.strides[d - 1], t.strides[d - 2]];
  using swapped = t.asStrided(shape, strides, t.storageOffset);  // a view autograd does not record: matmul records itself
  if (!swapped.isContiguous()) return undefined;
  return swapped.reshape([one ? 1 : numelOf(batch), cols, rows]);
}

/** The transpose of a 2-d `t` as a view, when that view is contiguous (t is a transposed contiguous matrix); else undefined. */
function transposedContiguous(t: Tensor): Tensor | undefined {
  const [r, c] = t.shape;
  const [rs, cs] = t.strides;
  // [c, r] with strides [cs, rs] is contiguous when its rows are r apart and its elements adjacent (size-1 dims aside).
  if (!((c === 1 || cs === r) && (r === 1 || rs === 1))) return undefined;
  return t.asStrided([c, r], [cs, rs], t.storageOffset);  // a view autograd does not record: matmul records itself
}

// gx.linalg.svd lives in ./svd.ts (its derivative needs matmul from here); its types keep their old address.
export type { SvdResult, SvdOptions } from './svd';
