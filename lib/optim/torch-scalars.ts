// The scalars of torch.optim.lbfgs as torch holds them, for gx.optim.LBFGS
// to decide as torch decides.
//
// NOTE [ L-BFGS scalars ]
// torch's L-BFGS keeps some scalars as Python floats (the losses, lr, the
// tolerances) and others as 0-d tensors of the parameters' dtype: the
// directional derivatives g.d, max |d|, 1 / sum |g|, y.s and whatever
// arithmetic touches them (a cubic interpolation of them, a step it returns).
// Tensor arithmetic and comparisons happen in that dtype, the Python float
// cast to it first. That matters for a float32 fit near its optimum: the
// Armijo test `f_new > f + c1 * t * gtd` is, in float32, `f_new > f` once
// c1 t gtd is below half an ulp of f, so a trial step whose loss equals f
// (float32 cannot show the last digits of progress) is taken. Done in
// float64, the same test refused such a step, and the line search zoomed
// until its bracket was below toleranceChange: 12 more loss evaluations, the
// last of them thrown away, on the 10^6 x 100 logistic regression of
// examples/glm.ts (22 evaluations where torch took 10). So each value here
// carries whether torch holds it as a tensor, and operations round as
// torch's would. (Elementwise work on the device is not emulated: a fused
// multiply-add there may round differently from ours, by an ulp.)
import { roundToDType } from '../core/dtype';
import { dtypeInfo, type DType } from '../generated/dtypes';

/** A number as torch's L-BFGS holds it: a Python float, or a 0-d tensor of the parameters' dtype. */
export interface Num {
  readonly v: number;
  readonly tensor: boolean;
}

type Operand = Num | number;

/** Arithmetic and comparisons of Nums, for parameters of one dtype (NOTE [ L-BFGS scalars ]). */
export class TorchScalars {
  readonly #round: (x: number) => number;
  /** The type torch computes the dtype's arithmetic in (float32 for the half types, as its opmath). */
  readonly #opmath: (x: number) => number;

  constructor(dtype: DType) {
    this.#round = dtypeInfo(dtype).kind === 'f' ? (x) => roundToDType(x, dtype) : Math.fround;
    this.#opmath = dtype === 'float64' ? (x) => x : Math.fround;
  }

  /** A 0-d tensor's value (a reduction read back, such as g.d). */
  tensor(v: number): Num {
    return { v: this.#round(v), tensor: true };
  }

  #num(x: Operand): Num {
    return typeof x === 'number' ? { v: x, tensor: false } : x;
  }

  /** f(a, b): when either is a tensor, computed in its opmath type (the float cast to it) and rounded to the dtype; else in float64. */
  #op(a: Operand, b: Operand, f: (x: number, y: number) => number): Num {
    const x = this.#num(a), y = this.#num(b);
    if (!x.tensor && !y.tensor) return { v: f(x.v, y.v), tensor: false };
    return { v: this.#round(this.#opmath(f(this.#opmath(x.v), this.#opmath(y.v)))), tensor: true };
  }

  /** The operands as a comparison sees them: in the opmath type when either is a tensor. */
  #cmp(a: Operand, b: Operand): [number, number] {
    const x = this.#num(a), y = this.#num(b);
    return x.tensor || y.tensor ? [this.#opmath(x.v), this.#opmath(y.v)] : [x.v, y.v];
  }

  add(a: Operand, b: Operand): Num { return this.#op(a, b, (x, y) => x + y); }
  sub(a: Operand, b: Operand): Num { return this.#op(a, b, (x, y) => x - y); }
  mul(a: Operand, b: Operand): Num { return this.#op(a, b, (x, y) => x * y); }
  div(a: Operand, b: Operand): Num { return this.#op(a, b, (x, y) => x / y); }

  gt(a: Operand, b: Operand): boolean { const [x, y] = this.#cmp(a, b); return x > y; }
  ge(a: Operand, b: Operand): boolean { const [x, y] = this.#cmp(a, b); return x >= y; }
  lt(a: Operand, b: Operand): boolean { const [x, y] = this.#cmp(a, b); return x < y; }
  le(a: Operand, b: Operand): boolean { const [x, y] = this.#cmp(a, b); return x <= y; }

  abs(a: Operand): Num { const x = this.#num(a); return { v: Math.abs(x.v), tensor: x.tensor }; }
  sqrt(a: Operand): Num { const x = this.#num(a); return x.tensor ? this.tensor(Math.sqrt(x.v)) : { v: Math.sqrt(x.v), tensor: false }; }

  /** Python's max(a, b): a unless b is strictly larger (so NaN and ties keep a), and whichever it is. */
  max(a: Operand, b: Operand): Num { return this.gt(b, a) ? this.#num(b) : this.#num(a); }
  /** Python's min(a, b). */
  min(a: Operand, b: Operand): Num { return this.lt(b, a) ? this.#num(b) : this.#num(a); }
}
