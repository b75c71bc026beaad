// Math.* in jit functions, one entry per function: the typer's rule (its
// arity, whether integers stay integers), its CUDA spelling and the
// simulator's JavaScript for it (NOTE [ One intrinsic table ] in
// intrinsic-table.ts: the same rule for Math's functions). typing.ts,
// emit-cuda.ts and interpret.ts take their entries from here.
import type { HelperName } from './cuda-helpers';
import { intAbs, integral, intMinMax, intSign, minMax, round, sign, unary, type PtxIntMath, type PtxMath } from './ptx-math';

/** How a Math function on integers is spelled (it keeps int32 / int64: JS gives the same value back). */
interface IntegerFaces {
  /** `fn(args)` in CUDA for the C type `c`, and the helper defining it. */
  cuda(c: string, args: string): string;
  helper: HelperName;
  /** The simulator's call for int32 ('32') or int64 ('64'). */
  sim(bits: '32' | '64', args: string): string;
  /** The PTX emitter's instructions (ptx-math.ts). */
  ptx: PtxIntMath;
}

export interface MathEntry {
  arity: 1 | 2;
  /** Integers stay integers; absent: integers compute in float32 (weak ones float64). */
  int?: IntegerFaces | 'identity';
  /** CUDA's [float32, float64] functions (default: the name with f, and the name), and a helper defining them. */
  cuda?: readonly [string, string];
  helper?: HelperName;
  /** The simulator's [float32, float64] functions (float32 results then go through Math.fround). */
  sim: readonly [string, string];
  /** The PTX emitter's instructions (ptx-math.ts), for the functions that are a few exact instructions; absent: a kernel calling it is compiled by NVRTC. */
  ptx?: PtxMath;
}

const js = (f: string): readonly [string, string] => [f, f];
const minmax = (fn: 'min' | 'max'): IntegerFaces => ({
  cuda: (c, args) => `gx_jit_i${fn}<${c}>(${args})`, helper: 'iminmax', sim: (_b, args) => `R.i${fn}(${args})`, ptx: intMinMax(fn),
});
const absSign = (fn: 'abs' | 'sign'): IntegerFaces => ({
  cuda: (_c, args) => `gx_jit_i${fn}(${args})`, helper: 'iabs', sim: (b, args) => `R.i${fn}${b}(${args})`,
  ptx: fn === 'abs' ? intAbs : intSign,
});

/** Every Math function a kernel may call. */
export const MATH_TABLE = {
  exp: { arity: 1, sim: js('Math.exp') },
  log: { arity: 1, sim: js('Math.log') },
  log1p: { arity: 1, sim: js('Math.log1p') },
  expm1: { arity: 1, sim: js('Math.expm1') },
  log2: { arity: 1, sim: js('Math.log2') },
  log10: { arity: 1, sim: js('Math.log10') },
  sqrt: { arity: 1, sim: js('Math.sqrt'), ptx: unary('sqrt.rn') },
  cbrt: { arity: 1, sim: js('Math.cbrt') },
  sin: { arity: 1, sim: js('Math.sin') },
  cos: { arity: 1, sim: js('Math.cos') },
  tan: { arity: 1, sim: js('Math.tan') },
  asin: { arity: 1, sim: js('Math.asin') },
  acos: { arity: 1, sim: js('Math.acos') },
  atan: { arity: 1, sim: js('Math.atan') },
  sinh: { arity: 1, sim: js('Math.sinh') },
  cosh: { arity: 1, sim: js('Math.cosh') },
  tanh: { arity: 1, sim: js('Math.tanh') },
  asinh: { arity: 1, sim: js('Math.asinh') },
  acosh: { arity: 1, sim: js('Math.acosh') },
  atanh: { arity: 1, sim: js('Math.atanh') },
  floor: { arity: 1, int: 'identity', sim: js('Math.floor'), ptx: integral('rmi') },
  ceil: { arity: 1, int: 'identity', sim: js('Math.ceil'), ptx: integral('rpi') },
  trunc: { arity: 1, int: 'identity', sim: js('Math.trunc'), ptx: integral('rzi') },
  round: { arity: 1, int: 'identity', cuda: ['gx_jit_roundf', 'gx_jit_round'], helper: 'round', sim: ['R.round32', 'R.round64'], ptx: round },
  abs: { arity: 1, int: absSign('abs'), cuda: ['fabsf', 'fabs'], sim: js('Math.abs'), ptx: unary('abs') },
  sign: { arity: 1, int: absSign('sign'), cuda: ['gx_jit_signf', 'gx_jit_sign'], helper: 'sign', sim: js('R.sign'), ptx: sign },
  atan2: { arity: 2, sim: js('Math.atan2') },
  pow: { arity: 2, sim: js('R.pow') },
  hypot: { arity: 2, sim: js('Math.hypot') },
  min: { arity: 2, int: minmax('min'), cuda: ['gx_jit_minf', 'gx_jit_min'], helper: 'minmax', sim: js('R.fmin'), ptx: minMax('min') },
  max: { arity: 2, int: minmax('max'), cuda: ['gx_jit_maxf', 'gx_jit_max'], helper: 'minmax', sim: js('R.fmax'), ptx: minMax('max') },
} as const satisfies Record<string, MathEntry>;

export type MathFn = keyof typeof MATH_TABLE;
/** The entry of `fn`, widened to MathEntry (the table's literal types are narrower). */
export const mathEntry = (fn: MathFn): MathEntry => MATH_TABLE[fn];
export const isMathFn = (n: string): n is MathFn => Object.hasOwn(MATH_TABLE, n);
