// The values of one tensor written into another, checked: the body of
// Tensor.copy_ and of the library's own copies (copyValues in tensor.ts),
// with nothing of autograd: whether the write is refused, recorded or only
// counted is the caller's (NOTE [ Autograd and in-place ops ] in tape/graph.ts).
import { dtypeInfo } from '../generated/dtypes';
import { dtypeCode } from './dtype';
import { native } from './native';
import { byteSpan, formatShape, overlapsItself, overlapsItselfError, sameLayout } from './shape';
import type { Meta, Tensor } from './tensor';

/**
 * @internal Writes src's values into dst (same shape and dtype, any devices), checked first: another
 * shape or dtype, or a dst whose elements share memory, is an error naming `fn`. Not recorded, and no
 * in-place check: callers go through Tensor.copy_ or copyValues (tensor.ts).
 */
export function copyRaw(dst: Tensor, src: Tensor, fn: string, nonBlocking = false): void {
  const dh = dst.handle(fn), sh = src.handle(fn);  // a disposed tensor is an error naming fn
  const to = dst.info(), from = src.info();
  if (to.shape.length !== from.shape.length || to.shape.some((s, i) => s !== from.shape[i])) {
    throw new Error(`${fn}: src has shape ${formatShape(from.shape)} but self has shape ${formatShape(to.shape)}; ` +
      'copy_ needs the same shape (broadcast src with expand() first)');
  }
  if (to.dtype !== from.dtype) {
    throw new TypeError(`${fn}: src is ${from.dtype} but self is ${to.dtype}; convert it first with src.astype('${to.dtype}')`);
  }
  if (overlapsItself(to.shape, to.strides)) throw overlapsItselfError(fn, 'self', to.shape, to.strides);
  if (to.device.equals(from.device) && overlapsPartly(dst, to, src, from)) {
    // Reading src while writing self would read overwritten elements: copy through a temporary
    // (NOTE [ Overlapping outputs ] in ops/overlap.ts).
    const tmp = native.empty(from.shape.slice(), dtypeCode(from.dtype), from.device.typeCode, from.device.index, false);
    try {
      native.copy(tmp, sh);
      native.copy(dh, tmp, nonBlocking);
    } finally {
      native.dispose(tmp);
    }
    return;
  }
  native.copy(dh, sh, nonBlocking);
}

/** Whether a and b (their layouts ma, mb) share memory in any way but element for element. */
function overlapsPartly(a: Tensor, ma: Meta, b: Tensor, mb: Meta): boolean {
  const item = dtypeInfo(ma.dtype).itemsize;
  const ra = byteSpan(a.address(), ma.shape, ma.strides, item), rb = byteSpan(b.address(), mb.shape, mb.strides, item);
  if (ra === undefined || rb === undefined || ra[1] <= rb[0] || rb[1] <= ra[0]) return false;
  return !sameLayout(a.address(), ma.shape, ma.strides, b.address(), mb.shape, mb.strides);
}
