// gx.nn.functional.rmsNorm and bilinear (torch.nn.functional.rms_norm and
// bilinear), composite like the rest of functional.ts: made of ops that
// record, their intermediates freed by gx.tidy.
import { add, mul, rsqrt } from '../generated/elementwise';
import { mean, sum } from '../ops/reduce/functions';
import { matmul } from '../ops/linalg/matmul';
import { permute } from '../ops/layout/layout';
import { describeValue, formatShape } from '../core/shape';
import type { DType } from '../core/dtype';
import type { Tensor } from '../core/tensor';
import { tidy } from '../core/tidy';
import { floatingArg, normDtype, normResultDtype } from './args';

const F = 'gx.nn.functional';

/** The machine epsilon of a floating dtype (torch.finfo(dtype).eps): rmsNorm's default eps. */
export function finfoEps(dtype: DType): number {
  switch (dtype) {
    case 'float64': return 2 ** -52;
    case 'float16': return 2 ** -10;
    case 'bfloat16': return 2 ** -7;
    default: return 2 ** -23;
  }
}

/** Checks that x ends in normalizedShape; the axes it covers. */
function trailingAxes(x: Tensor, normalizedShape: unknown, fn: string): number[] {
  if (!Array.isArray(normalizedShape) || normalizedShape.length === 0 || normalizedShape.length > x.ndim) {
    throw new RangeError(`${fn}: argument 'normalizedShape' must be a non-empty list of at most ${x.ndim} sizes, got ${describeValue(normalizedShape)}`);
  }
  const k = normalizedShape.length;
  if (x.shape.slice(x.ndim - k).some((s, i) => s !== normalizedShape[i])) {
    throw new RangeError(`${fn}: input ${formatShape(x.shape)} does not end in normalizedShape ${formatShape(normalizedShape as number[])}`);
  }
  return Array.from({ length: k }, (_, i) => x.ndim - k + i);
}

/**
 * x / sqrt(mean(x^2) + eps) * weight over the last dims given by `normalizedShape`
 * (torch.nn.functional.rms_norm); eps null or undefined is the machine epsilon of x's dtype, as torch's.
 * @example gx.nn.functional.rmsNorm(x, [x.shape[x.ndim - 1]], w)
 */
export function rmsNorm(input: Tensor, normalizedShape: readonly number[], weight: Tensor | null = null, eps: number | null = null): Tensor {
  const fn = `${F}.rmsNorm`;
  const x = floatingArg(input, fn, 'input');
  const axes = trailingAxes(x, normalizedShape, fn);
  if (weight !== null && formatShape(floatingArg(weight, fn, 'weight').shape) !== formatShape(normalizedShape)) {
    throw new RangeError(`${fn}: argument 'weight' must have shape ${formatShape(normalizedShape)}, got ${formatShape(weight.shape)}`);
  }
  if (eps !== null && eps !== undefined && (typeof eps !== 'number' || !(eps >= 0))) {
    throw new RangeError(`${fn}: argument 'eps' must be a number >= 0 or null, got ${describeValue(eps)}`);
  }
  const e = eps ?? finfoEps(x.dtype);
  const out = normResultDtype(x, weight);
  return tidy(() => {
    const xc = x.dtype === normDtype(x) ? x : x.astype(normDtype(x));  // NOTE [ Norms of half inputs ] in args.ts
    let y = mul(xc, rsqrt(add(mean(mul(xc, xc), axes, { keepdims: true }), e)));
    if (weight !== null) y = mul(y, weight);
    return y.dtype === out ? y : y.astype(out);
  });
}

/**
 * y[..., o] = x1[..., :] A[o] x2[..., :]^T + b[o] (torch.nn.functional.bilinear): weight is
 * [out, in1, in2], bias [out] or null; x1 [..., in1] and x2 [..., in2] share their leading dims.
 * @example gx.nn.functional.bilinear(x1, x2, w, b)
 */
export function bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | null = null): Tensor {
  const fn = `${F}.bilinear`;
  const x1 = floatingArg(input1, fn, 'input1'), x2 = floatingArg(input2, fn, 'input2');
  const w = floatingArg(weight, fn, 'weight');
  if (w.ndim !== 3) throw new RangeError(`${fn}: argument 'weight' must be 3-d [out, in1, in2], got ${formatShape(w.shape)}`);
  const [out, in1, in2] = w.shape;
  if (x1.ndim === 0 || x1.shape[x1.ndim - 1] !== in1) throw new RangeError(`${fn}: argument 'input1' must end in ${in1} features (weight is ${formatShape(w.shape)}), got ${formatShape(x1.shape)}`);
  if (x2.ndim === 0 || x2.shape[x2.ndim - 1] !== in2) throw new RangeError(`${fn}: argument 'input2' must end in ${in2} features (weight is ${formatShape(w.shape)}), got ${formatShape(x2.shape)}`);
  const lead = x1.shape.slice(0, -1);
  if (formatShape(lead) !== formatShape(x2.shape.slice(0, -1))) {
    throw new RangeError(`${fn}: inputs must share their leading dims, got ${formatShape(x1.shape)} and ${formatShape(x2.shape)}`);
  }
  if (bias !== null) {
    const b = floatingArg(bias, fn, 'bias');
    if (b.ndim !== 1 || b.shape[0] !== out) throw new RangeError(`${fn}: argument 'bias' must be [${out}], got ${formatShape(b.shape)}`);
  }
  return tidy(() => {
    // x1 A as one matmul: A laid out [in1, out * in2], then each out's row dotted with x2.
    const a = permute(w, [1, 0, 2]).reshape([in1, out * in2]);
    const t = matmul(x1.reshape([-1, in1]), a).reshape([-1, out, in2]);
    const y = sum(mul(t, x2.reshape([-1, 1, in2])), 2).reshape([...lead, out]);
    return bias === null ? y : add(y, bias);
  });
}
