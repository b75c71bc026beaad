// The in-place ops recorded (NOTE [ Autograd and in-place ops ] in tape/graph.ts): add_, mul_, exp_,
// relu_, clamp_ and every other op whose write computeResult makes with its out-of-place form at hand.
// Recorded, such a write is that form computed from a copy of self (recording through the op's own
// derivative) and copied into self by copy_'s path (copy-backward.ts): self's new history is the op's,
// through a view its base's (torch's CopySlices), and the version counters see the write.
import { Tensor } from '../core/tensor';
import { requiresGrad } from '../tape/graph';
import { baseOf, recordedCopy, refuseWrite } from './copy-backward';

/**
 * `fn` (an in-place op, 'Tensor.add_') on `self`, recorded (installed as the tape's `inPlace` recorder;
 * computeResult calls it when the write is one autograd must see): `outOfPlace` computes the op, recording,
 * from a recorded clone of self, and its result, converted to self's dtype, is copied into self. The clone
 * stands for self's values before the write: an op that saves its input (mul's, pow's) saves the clone,
 * which no later write changes. Refused before anything is computed where torch refuses: a leaf that
 * requires grad or a view of one, and a view made under gx.noGrad() of a tensor in the graph.
 */
export function recordedInPlace(fn: string, self: Tensor, outOfPlace: (self: Tensor) => Tensor): void {
  const name = fn.replace(/^(Tensor|gx)\./, '');  // the node's name: 'add_', 'indexPut_'
  const base = baseOf(self);
  refuseWrite(fn, name, self, base);
  if (base !== undefined && !requiresGrad(self) && requiresGrad(base)) {
    throw new Error(`${fn}: self is a view made under gx.noGrad() of a tensor autograd records, and an in-place op on it with ` +
      'grad mode on would change its base without a gradient for the values it held (torch refuses it too); make the view ' +
      'and write it both inside gx.noGrad() or both outside');
  }
  const made: Tensor[] = [];
  const own = (t: Tensor): Tensor => {
    made.push(t);
    return t;
  };
  try {
    const before = own(self.clone());
    let result = own(outOfPlace(before));
    if (result.dtype !== self.dtype) result = own(result.astype(self.dtype));  // in place, self keeps its dtype
    recordedCopy(fn, self, result, false, name);
  } finally {
    for (const t of made) t.dispose();
  }
}
