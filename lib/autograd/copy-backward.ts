// Tensor.copy_ recorded, as torch records it (NOTE [ copy_ into views ] in
// tape/graph.ts): the gradient of the elements written goes to src, zero to
// what they held; fill_ and zero_ too, as copies of their value. Written whole, the tensor's new node is torch's
// CopyBackwards; written through a view, its base's new node is torch's
// CopySlices, the view's elements found by their positions in the one storage
// (positions below), and a view's history remade from its base's puts its
// gradient at those positions. The formulas are ops that record (take,
// indexAdd, mul), so a backward with createGraph differentiates them again.
import * as E from '../generated/elementwise';
import { copyRaw } from '../core/copy';
import { copyValues, Tensor } from '../core/tensor';
import type { Scalar } from '../core/dtype';
import type { Device } from '../core/device';
import { arange, empty, full } from '../ops/creation/creation';
import { take } from '../ops/indexing/indexing';
import { indexAdd } from '../ops/indexing/scatter-family';
import { isGradEnabled, noGrad } from '../tape/mode';
import { bumpVersion, checkInPlace, recordOver, requiresGrad, type BackwardFn } from '../tape/graph';
import { overlapsItself } from '../core/shape';

/** A tensor's place in its storage: what positions() needs of a base and of a view of it. */
interface Layout {
  shape: readonly number[];
  strides: readonly number[];
  offset: number;
}

const layoutOf = (t: Tensor): Layout => ({ shape: t.shape, strides: t.strides, offset: t.storageOffset });
const numel = (shape: readonly number[]): number => shape.reduce((n, s) => n * s, 1);

/** The lowest and one past the highest storage element of `l` (numel(l) > 0). */
function span(l: Layout): [number, number] {
  let lo = l.offset, hi = l.offset;
  l.shape.forEach((n, d) => {
    const reach = (n - 1) * l.strides[d];
    if (reach < 0) lo += reach;
    else hi += reach;
  });
  return [lo, hi + 1];
}

/**
 * For each element of `view` (a view of `base`: its elements are base's), its position in base in C order,
 * as an int64 tensor of the view's shape on `device`: base's positions written into a scratch storage through
 * base's layout, read back through the view's. Not recorded (an index).
 */
function positions(base: Layout, view: Layout, device: Device): Tensor {
  const [lo, hi] = span(base);
  return noGrad(() => {
    using scratch = empty([hi - lo], { dtype: 'int64', device });
    using iota = arange(numel(base.shape), { dtype: 'int64', device });
    using shaped = iota.reshape(base.shape as number[]);
    using into = scratch.asStrided(base.shape, base.strides, base.offset - lo);
    copyValues(into, shaped, 'Tensor.copy_ backward');
    using picked = scratch.asStrided(view.shape, view.strides, view.offset - lo);
    return picked.clone();
  });
}

/** g on src's device (a copy_ may cross devices). */
const onDevice = (g: Tensor, device: Device): Tensor => (g.device.equals(device) ? g : g.toDevice(device, false, 'Tensor.copy_ backward'));

/**
 * A view's gradient as its base's: zeros, with g added at the view's positions (added: an expanded view
 * holds an element more than once). Installed as the tape's `viewOf` recorder, for refreshView.
 */
export function viewOfBackward(base: Tensor, view: Tensor): BackwardFn {
  const b = layoutOf(base), v = layoutOf(view), device = base.device;
  return (g) => {
    const n = numel(b.shape);
    if (numel(v.shape) === 0) return [0];
    const index = positions(b, v, device);
    const flat = indexAdd(full([n], 0, { dtype: g.dtype, device }), 0, index.reshape([-1]), g.reshape([-1]));
    return [flat.reshape(b.shape as number[])];
  };
}

/** copy_ into a view of `base`: base's gradient to its old history outside the view, the view's part to src. */
function sliceCopyBackward(base: Tensor, view: Tensor, srcDevice: Device): BackwardFn {
  const b = layoutOf(base), v = layoutOf(view);
  return (g) => {
    if (numel(v.shape) === 0) return [g, 0];
    const index = positions(b, v, g.device);
    const keep = noGrad(() => {
      const [lo, hi] = span(b);
      using ones = full([hi - lo], 1, { dtype: g.dtype, device: g.device });
      using written = ones.asStrided(v.shape, v.strides, v.offset - lo);
      written.fill_(0);
      using kept = ones.asStrided(b.shape, b.strides, b.offset - lo);
      return kept.clone();
    });
    return [E.mul(g, keep), onDevice(take(g, index), srcDevice)];
  };
}

/** Whether `t` is a leaf that requires grad (requiresGrad_ set, no recorded op made it). */
const isGradLeaf = (t: Tensor): boolean => t.ag !== undefined && t.ag.requiresGrad && t.ag.node === null;

/**
 * The name a recorded write gives its node (Tensor.gradFn): copy_, fill_ and zero_ (copies of their
 * value), or the in-place op whose result is copied in ('add_', 'relu_': inplace-backward.ts).
 */
type CopyName = string;

/** How a refusal of each names the write it could not record and the other way to make it. */
const WRITES: Record<string, { verb: string; expanded: string } | undefined> = {
  copy_: { verb: 'copy into', expanded: 'a copy of argument \'src\' (it requires grad); detach() src, or copy under gx.noGrad()' },
  fill_: { verb: 'fill', expanded: 'a fill; detach() a tensor value, or fill under gx.noGrad()' },
  zero_: { verb: 'zero', expanded: 'a zero_; zero it under gx.noGrad()' },
};
/** An in-place op's (inplace-backward.ts): its out-of-place form is the other way. */
const OP_WRITE = { verb: 'write', expanded: 'an in-place op; use the op out of place (a new tensor), or write under gx.noGrad()' };

/** Refuses what copy_ cannot record: a leaf that requires grad or a view of one (torch's rule), a base whose elements share memory. */
export function refuseWrite(fn: string, name: CopyName, dst: Tensor, base: Tensor | undefined): void {
  const write = WRITES[name] ?? OP_WRITE;
  if (isGradLeaf(dst) || (base !== undefined && isGradLeaf(base))) {
    const what = isGradLeaf(dst) ? 'self is a leaf tensor that requires grad' : 'self is a view of a leaf tensor that requires grad';
    throw new Error(`${fn}: ${what}, and an in-place op on a leaf cannot be recorded (its gradient would be that of values ` +
      `it no longer holds); write it inside gx.noGrad() (as optimizer steps do), or ${write.verb} a tensor that does not require grad`);
  }
  if (base !== undefined && overlapsItself(base.shape, base.strides)) {
    throw new Error(`${fn}: self is a view of an expanded tensor (shape [${base.shape.join(', ')}], strides ` +
      `[${base.strides.join(', ')}]), into which autograd cannot record ${write.expanded}`);
  }
}

/** dst's base (undefined once the base is disposed: dst is a tensor of its own then). */
export function baseOf(dst: Tensor): Tensor | undefined {
  const base = dst.viewBase;
  if (base !== undefined && base.isDisposed) return (dst.viewBase = undefined);
  return base;
}

/**
 * Tensor.copy_ (autogradHooks.copy): the checked copy, recorded when grad mode is on and src, self or
 * self's base takes part in autograd; otherwise the in-place rule of every write (checkInPlace). `name`:
 * the op recorded (fill_ and zero_ are copies of their value: recordedFill).
 */
export function recordedCopy(fn: string, dst: Tensor, src: Tensor, nonBlocking: boolean, name: CopyName = 'copy_'): void {
  dst.handle(fn);  // a disposed tensor is an error naming fn
  src.handle(fn);
  const base = baseOf(dst);
  const root = base ?? dst;
  if (!isGradEnabled() || !(requiresGrad(src) || requiresGrad(dst) || requiresGrad(root))) {
    checkInPlace(fn, dst, []);
    copyRaw(dst, src, fn, nonBlocking);
    return;
  }
  refuseWrite(fn, name, dst, base);
  copyRaw(dst, src, fn, nonBlocking);  // checked before anything is recorded: a refused copy changes nothing
  bumpVersion(dst);
  const srcDevice = src.device;
  if (base === undefined) recordOver(name, [dst, src], dst, [], (g) => [0, onDevice(g, srcDevice)]);
  else recordOver(name, [base, src], base, [], sliceCopyBackward(base, dst, srcDevice));
  root.epoch++;  // its views' histories are out of date, dst's among them
}

/**
 * Tensor.fill_ and zero_ (autogradHooks.fill), as torch records them (FillBackward, ZeroBackward; CopySlices
 * through a view): a copy of the value broadcast to dst, through recordedCopy (NOTE [ copy_ into views ]), so
 * what dst held gets zero and a 0-d tensor value the sum of the gradient of the elements written (expand's
 * backward). Returns false, writing nothing, for a number autograd need not see: the caller's plain fill.
 */
export function recordedFill(fn: string, dst: Tensor, value: Scalar | Tensor): boolean {
  dst.handle(fn);
  const name: CopyName = fn === 'Tensor.zero_' ? 'zero_' : 'fill_';
  if (!(value instanceof Tensor)) {
    const root = baseOf(dst) ?? dst;
    if (!isGradEnabled() || !(requiresGrad(dst) || requiresGrad(root))) return false;
  } else if (value.ndim !== 0) {
    throw new RangeError(`${fn}: a tensor value must be 0-d, as torch's fill_ (got shape [${value.shape.join(', ')}]); ` +
      'pass value.reshape([]) for one element, or copy_ a tensor of self\'s shape');
  }
  const made: Tensor[] = [];
  const own = (t: Tensor): Tensor => { made.push(t); return t; };
  try {
    let v = value instanceof Tensor ? value : own(full([], value, { dtype: dst.dtype, device: dst.device }));
    if (!v.device.equals(dst.device)) v = own(v.to(dst.device));
    if (v.dtype !== dst.dtype) v = own(v.astype(dst.dtype));
    recordedCopy(fn, dst, own(v.expand(dst.shape as number[])), false, name);
  } finally {
    for (const t of made) t.dispose();
  }
  return true;
}
