// gx.pad: torch.nn.functional.pad, composed from narrow, flip, expand, full
// and cat, so it runs on every device and autograd follows through cat
// (gradients are narrows of the result's gradient).
import { full } from '../creation/creation';
import type { DType, Scalar } from '../../core/dtype';
import { optionKeys } from '../../core/options';
import { describeValue, formatShape } from '../../core/shape';
import type { Tensor } from '../../core/tensor';
import { checkTensor, optionsOf } from '../common';
import { cat, checkInt, expand, narrow } from './layout';
import { alongAxes, flip, joined } from './reorder';
import { tooManyArguments } from '../../core/options';

/** How gx.pad fills the new elements. */
export type PadMode = 'constant' | 'reflect' | 'replicate';

/** Options of gx.pad. */
export interface PadOptions {
  /** 'constant' (default): `value`; 'reflect': the input mirrored without its edge; 'replicate': the edge element repeated. */
  mode?: PadMode;
  /** The fill of mode 'constant' (default 0). */
  value?: Scalar;
}

const PAD_KEYS = optionKeys<PadOptions>({ mode: true, value: true });

/**
 * x padded: `pad` lists (before, after) amounts for the last dim first, then
 * the one before it, ... (torch.nn.functional.pad's order); negative
 * amounts crop. Always a new tensor.
 * @example gx.pad(gx.tensor([[1, 2]]), [1, 2]) // [[0, 1, 2, 0, 0]]; gx.pad(img, [1, 1, 1, 1], { mode: 'reflect' })
 */
export function pad<D extends DType>(x: Tensor<D>, pad: readonly number[], opts?: PadOptions): Tensor<D> {
  if (arguments.length > 3) tooManyArguments('gx.pad', '(x, pad, options?)', arguments.length - 3, arguments[3]);
  const fn = 'gx.pad';
  checkTensor(x, fn, 'input');
  const o = optionsOf<PadOptions>(opts, fn, PAD_KEYS);
  const mode = o.mode ?? 'constant';
  if (mode !== 'constant' && mode !== 'reflect' && mode !== 'replicate') {
    throw new TypeError(`${fn}: mode must be 'constant', 'reflect' or 'replicate', got ${describeValue(mode)}`);
  }
  const value = o.value ?? 0;
  if (typeof value !== 'number' && typeof value !== 'bigint' && typeof value !== 'boolean') {
    throw new TypeError(`${fn}: value must be a number, bigint or boolean, got ${describeValue(value)}`);
  }
  if (!Array.isArray(pad) || pad.length % 2 !== 0) throw new TypeError(`${fn}: pad must be an array of an even number of integers, got ${describeValue(pad)}`);
  const amounts = pad.map((p: unknown, i) => checkInt(p, fn, `pad[${i}]`));
  if (amounts.length / 2 > x.ndim) {
    throw new RangeError(`${fn}: pad has ${amounts.length / 2} (before, after) pairs but the input has ${x.ndim} dimensions (shape ${formatShape(x.shape)})`);
  }
  const dims = Array.from({ length: amounts.length / 2 }, (_, k) => x.ndim - 1 - k);
  return alongAxes(x, dims, (t, d, k) => padAxis(t, d, amounts[2 * k], amounts[2 * k + 1], mode, value, fn));
}

function padAxis<D extends DType>(t: Tensor<D>, d: number, before: number, after: number, mode: PadMode, value: Scalar, fn: string): Tensor<D> {
  const n = t.shape[d];
  if (before < 0 || after < 0) {
    const keep = n + Math.min(before, 0) + Math.min(after, 0);
    if (keep < 0) throw new RangeError(`${fn}: cropping ${-Math.min(before, 0)} and ${-Math.min(after, 0)} from dimension ${d} of size ${n} leaves nothing`);
    using cropped = narrow(t, d, -Math.min(before, 0), keep);
    return padAxis(cropped, d, Math.max(before, 0), Math.max(after, 0), mode, value, fn);
  }
  const limit = mode === 'reflect' ? n - 1 : mode === 'replicate' ? (n > 0 ? Infinity : 0) : Infinity;
  if (before > limit || after > limit) {
    throw new RangeError(`${fn}: ${mode} padding of (${before}, ${after}) does not fit dimension ${d} of size ${n}` +
      (mode === 'reflect' ? `; reflect needs each amount < the size` : '; replicate needs a non-empty dimension'));
  }
  const sized = (k: number): number[] => t.shape.map((s, i) => (i === d ? k : s));
  const side = (k: number, atEnd: boolean): Tensor<D> | undefined => {
    if (k === 0) return undefined;
    if (mode === 'constant') return full<D>(sized(k), value, { dtype: t.dtype, device: t.device });
    if (mode === 'replicate') {
      using edge = narrow(t, d, atEnd ? n - 1 : 0, 1);
      return expand(edge, sized(k));
    }
    using mirror = narrow(t, d, atEnd ? n - 1 - k : 1, k);
    return flip(mirror, d);
  };
  const parts = [side(before, false), narrow(t, d, 0, n), side(after, true)].filter((p): p is Tensor<D> => p !== undefined);
  return joined(parts, (p) => cat(p, d));
}
