// Constant folding for the PTX emitter (emit-ptx.ts): what NVRTC's
// optimizer computes at compile time, computed here the same way, so the PTX
// route runs the code the NVRTC route runs (NOTE [ PTX path ]): library math
// on literal arguments (with the simulator's JS, correctly rounded, as
// NVRTC's compiler folds with the host's libm), and float arithmetic on
// constants (emit-ptx.ts: foldFloat).
import type { Expr } from './ir';
import { mathEntry } from './math-table';
import { RUNTIME } from './semantics';
import { isFloat } from './types';

/** The value of a constant argument (a literal, its negation, conversions of them), when JS computes it as C does; else undefined. */
export function constantOf(e: Expr): number | undefined {
  switch (e.k) {
    case 'lit': {
      const n = typeof e.v === 'boolean' ? undefined : Number(e.v);
      return n !== undefined && (typeof e.v === 'number' || Number.isSafeInteger(n)) ? n : undefined;
    }
    case 'neg': {
      const v = constantOf(e.x);
      return v === undefined ? undefined : -v;
    }
    case 'cast': {
      const v = constantOf(e.x);
      if (v === undefined || !isFloat(e.ty.dtype)) return undefined;
      // float64 to float32 rounds once, as C; an integer is taken only when the float holds it exactly.
      if (e.x.ty.dtype === 'float64' || e.x.ty.dtype === 'float32') return e.ty.dtype === 'float32' ? Math.fround(v) : v;
      return e.ty.dtype === 'float32' && Math.fround(v) !== v ? undefined : v;
    }
    default: return undefined;
  }
}

/** Library math on literal arguments, computed as the simulator computes it (interpret.ts); undefined when an argument is not one. */
export function foldLibrary(fn: string, d: 'float32' | 'float64', args: readonly Expr[]): number | undefined {
  const vs = args.map(constantOf);
  if (vs.some((v) => v === undefined)) return undefined;
  const [a, b] = vs as number[];
  let v: number;
  if (fn === 'fmod') v = a % b;
  else if (fn === 'pow') v = RUNTIME.pow(a, b);
  else {
    const sim = mathEntry(fn as Parameters<typeof mathEntry>[0]).sim[1];
    const f: unknown = sim.startsWith('Math.') ? Reflect.get(Math, sim.slice(5)) : Reflect.get(RUNTIME, sim.slice(2));
    if (typeof f !== 'function') return undefined;
    v = Number(f(...(vs as number[])));
  }
  return d === 'float32' ? Math.fround(v) : v;
}
