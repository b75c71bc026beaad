// gx.vectorize on CPU tensors: the signature's function typed as for CUDA
// (so refused where CUDA refuses it) and interpreted per element in the
// signature's dtypes (interpret.ts); loaded with the first call on the CPU.
import { INTEGER_RANGE, STORAGE_ARRAY, VALUE_ARRAY, type DType, type StorageArrayMap } from '../generated/dtypes';
import { broadcastShapes, numelOf } from '../core/shape';
import { copyValues, Tensor } from '../core/tensor';
import { tensor } from '../ops/creation/creation';
import { compileScalar, type CompiledScalar, type SimBlock, type SimState, type SimThread } from './interpret';
import type { Parsed } from './parse';
import { simArray, STEP_BUDGET } from './simulator';
import type { ScalarDType, Signature } from './types';
import { typed } from './vectorize-gen';

type Storage = StorageArrayMap[ScalarDType];

const [INT32_MIN, INT32_MAX] = INTEGER_RANGE.int32.map(Number);
const [INT64_MIN, INT64_MAX] = INTEGER_RANGE.int64;

/**
 * Stores the JS value v at j of `a` (dtype d's storage), converted as CUDA
 * converts a double to an integer (cvt.rzi: toward zero, saturating at the
 * type's bounds, NaN to 0), where the typed array's store wrapped (3e9 became
 * -1294967296, -1e19 a positive int64) and Infinity became 0.
 */
function store(a: Storage, j: number, v: number | boolean, d: ScalarDType): void {
  if (d === 'bool') {
    a[j] = v !== 0 && v !== false ? 1 : 0;
    return;
  }
  const x = typeof v === 'boolean' ? Number(v) : v;
  if (d === 'int64') {
    (a as BigInt64Array)[j] = Number.isNaN(x) ? 0n : x >= Number(INT64_MAX) ? INT64_MAX : x <= Number(INT64_MIN) ? INT64_MIN : BigInt(Math.trunc(x));
  } else if (d === 'int32') {
    a[j] = Number.isNaN(x) ? 0 : Math.trunc(Math.min(INT32_MAX, Math.max(INT32_MIN, x)));
  } else {
    a[j] = x;  // the typed array rounds (float32)
  }
}

/** An element of `a` (dtype d's storage) as the simulator's value of d: bool a boolean, int64 a bigint. */
function valueOf(a: Storage, j: number, d: ScalarDType): unknown {
  const v = a[j];
  return d === 'bool' ? v !== 0 : v;
}

/** Stores a value of the simulator (already of dtype d) at j of `a`. */
function storeValue(a: Storage, j: number, v: unknown, d: ScalarDType): void {
  if (d === 'bool') a[j] = v === true ? 1 : 0;
  else (a as Float64Array)[j] = v as number;
}

/** A scalar function runs outside a kernel: no thread or block to read; its loops share a step budget per element. */
const NO_THREAD: SimThread = { tx: 0, ty: 0, tz: 0, bx: 0n, by: 0n, bz: 0n };
const NO_BLOCK: SimBlock = { shared: () => { throw new Error('gx.vectorize: shared arrays belong in a kernel'); } };
function cpuState(fn: string): SimState {
  return {
    bd: [1, 1, 1], gd: [1n, 1n, 1n], steps: STEP_BUDGET,
    over(): never {
      throw new RangeError(`${fn}: the simulator stopped after ${STEP_BUDGET} loop iterations for one element (a loop that never ends?)`);
    },
    local: (dtype, extents, label) => simArray(label, dtype, new VALUE_ARRAY[dtype](extents.reduce((a, b) => a * b, 1)), extents),
    rd: (_a, off) => off,
    wr: (_a, off) => off,
  };
}

/** The signature's function as the simulator runs it: typed as for CUDA (so refused where CUDA refuses it), then interpreted. */
export function scalarOf(p: Parsed, name: string, s: Signature, fnName: string): CompiledScalar {
  return compileScalar(typed(p, name, s, fnName).fn);
}

/** Runs `fn` (signature s) per element over the broadcast arguments on the CPU. */
export function runOnCpu(fn: CompiledScalar, s: Signature, args: (Tensor | number)[], out: Tensor | undefined, fnName: string): Tensor {
  const shape = broadcastShapes(args.filter((a): a is Tensor => a instanceof Tensor).map((t) => t.shape), fnName);
  const n = numelOf(shape);
  const cols = args.map((a, i) => {
    const d = s.ins[i];
    if (!(a instanceof Tensor)) {
      const one = new STORAGE_ARRAY[d](1);
      store(one, 0, a, d);
      const v = valueOf(one, 0, d);
      return () => v;
    }
    using b = a.broadcastTo(shape);
    using c = b.contiguous();
    const vals = c.toArraySync() as Storage;
    return (j: number): unknown => valueOf(vals, j, d);
  });
  const data = new STORAGE_ARRAY[s.out](n);
  const xs = new Array<unknown>(args.length);
  const S = cpuState(fnName);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < xs.length; i++) xs[i] = cols[i](j);
    S.steps = STEP_BUDGET;
    storeValue(data, j, fn(NO_THREAD, S, NO_BLOCK, ...xs), s.out);
  }
  const result = tensor(data, { dtype: s.out as DType, shape });
  if (out === undefined) return result;
  try {
    copyValues(out, result, fnName);
  } finally {
    result.dispose();
  }
  return out;
}
