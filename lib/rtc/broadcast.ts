// NumPy broadcasting of shapes.
import { formatShape } from '../shape';

/** The broadcast shape of `shapes` (NumPy rules); an Error naming `fn` and the shapes when they do not broadcast. */
export function broadcastShapes(shapes: readonly (readonly number[])[], fn: string): number[] {
  const ndim = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(ndim).fill(1);
  for (const s of shapes) {
    const lead = ndim - s.length;
    s.forEach((d, k) => {
      const o = out[lead + k];
      if (o === 1) out[lead + k] = d;
      else if (d !== 1 && d !== o) {
        throw new Error(`${fn}: shapes ${shapes.map(formatShape).join(', ')} do not broadcast (dimension ${lead + k}: ${o} vs ${d})`);
      }
    });
  }
  return out;
}
