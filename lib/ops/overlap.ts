// NOTE [ Overlapping outputs ]
// A result written into `out` or into self (in place) may share memory with
// an input. Elementwise ops read element i of each input before writing
// element i of the result, so the one safe kind of sharing is the same
// elements in the same layout (`x.add_(x)`, `gx.mul(x, 2, { out: x })`).
// Any other sharing (a shifted narrow, a transpose of the output, the output
// of a matmul or a reduction that is also its input) would let the kernel
// read elements it has already overwritten: PyTorch refuses some of these
// and gets others wrong. Here the op computes into a temporary and copies it
// over, so the result is what it would be with separate memory. The check
// costs nothing when the op allocates its result (new memory overlaps
// nothing), and two address ranges when an `out` is given.
import { dtypeInfo } from '../generated/dtypes';
import { byteSpan, sameLayout } from '../core/shape';
import { Tensor } from '../core/tensor';

function spanOf(t: Tensor): [number, number] | undefined {
  return byteSpan(t.address(), t.shape, t.strides, dtypeInfo(t.dtype).itemsize);
}

/**
 * Whether writing into `target` could change an input before it is read
 * (NOTE [ Overlapping outputs ]): some input shares memory with it, other
 * than (for an elementwise op) element for element. Conservative: two
 * interleaved views whose ranges cross count as overlapping.
 */
export function overlapsInputs(target: Tensor, inputs: readonly unknown[], elementwise: boolean): boolean {
  let range: [number, number] | undefined | null = null;
  for (const t of inputs) {
    if (!(t instanceof Tensor) || !t.device.equals(target.device)) continue;
    if (t === target) {
      if (elementwise) continue;
      return true;
    }
    if (range === null) range = spanOf(target);
    if (range === undefined) return false;
    const r = spanOf(t);
    if (r === undefined || r[1] <= range[0] || range[1] <= r[0]) continue;
    if (elementwise && t.dtype === target.dtype && sameLayout(target.address(), target.shape, target.strides, t.address(), t.shape, t.strides)) continue;
    return true;
  }
  return false;
}
