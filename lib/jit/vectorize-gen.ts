// gx.vectorize's translator side, loaded only when a translation misses the
// cache or a function runs on the CPU (NOTE [ Translation cache ]): the
// scalar function typed and emitted as a __device__ function for CUDA, or
// typed and interpreted per element in the signature's dtypes on the CPU.
import { STORAGE_ARRAY, VALUE_ARRAY, type DType, type StorageArrayMap } from '../generated/dtypes';
import { broadcastShapes, numelOf } from '../core/shape';
import { Tensor } from '../core/tensor';
import { tensor } from '../ops/creation/creation';
import { Module } from './translate';
import { emitDevice } from './emit-cuda';
import type { FnIR } from './ir';
import { compileScalar, type CompiledScalar, type SimBlock, type SimState, type SimThread } from './interpret';
import { simArray, STEP_BUDGET } from './simulator';
import { typeFunction } from './typer-function';
import { strong, type ScalarDType, type Signature } from './types';
import type { Parsed } from './kernel-gen';
import { countTranslation, type Translation } from './translation-cache';
import { PTX_MIN_CAPABILITY } from './emit-ptx';
import { emitElementwisePtx } from './ptx-elementwise';
import { PtxUnsupported } from './ptx-isa';
import type { ElementwiseSourceIn } from '../rtc/elementwise-codegen';

export { parse } from './kernel-gen';

/** One signature, `'float32(float32, float32)'`: the output dtype and the inputs'. */
export type { Signature } from './types';

/** The function typed per signature, once for the CUDA source and the PTX alike (with the module its typing filled). */
const typedFunctions = new WeakMap<Parsed, Map<string, { fn: FnIR; module: Module }>>();
function typed(p: Parsed, name: string, s: Signature, fnName: string): { fn: FnIR; module: Module } {
  let bySig = typedFunctions.get(p);
  if (bySig === undefined) typedFunctions.set(p, (bySig = new Map()));
  const key = JSON.stringify([name, s.out, s.ins]);
  let t = bySig.get(key);
  if (t === undefined) {
    const module = new Module(false);
    const fn = typeFunction(p.parsed, 'device', `gx_vec_${name}`, s.ins.map((d) => ({ kind: 'number', ty: strong(d) })), strong(s.out),
      p.lookup(), module, fnName);
    bySig.set(key, (t = { fn, module }));
  }
  return t;
}

/** The CUDA __device__ function `gx_vec_<name>` for signature `s` (with the helpers and device functions it calls). */
export function scalarSource(p: Parsed, name: string, s: Signature, fnName: string): string {
  countTranslation();
  const { fn, module } = typed(p, name, s, fnName);
  const code = emitDevice(fn, module);
  return module.preamble() + code;
}

/**
 * The elementwise kernel `g` of signature `s` as PTX (NOTE [ Elementwise
 * PTX ]), or undefined when a node of the function, or the kernel's shape,
 * has no PTX face: the kernel is then compiled from its CUDA source.
 */
export function scalarPtx(p: Parsed, name: string, s: Signature, g: ElementwiseSourceIn, fnName: string): Translation['ptx'] {
  countTranslation();
  const { fn } = typed(p, name, s, fnName);
  try {
    return { text: emitElementwisePtx(fn, g), minCapability: PTX_MIN_CAPABILITY };
  } catch (e) {
    if (e instanceof PtxUnsupported) return undefined;
    throw e;
  }
}

type Storage = StorageArrayMap[ScalarDType];

/** Stores the JS value v at j of `a` (dtype d's storage), converted as a C cast would (NaN to an integer gives 0 here, undefined in C). */
function store(a: Storage, j: number, v: number | boolean, d: ScalarDType): void {
  if (d === 'int64') (a as BigInt64Array)[j] = typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : v === true ? 1n : 0n;
  else if (d === 'bool') a[j] = v !== 0 && v !== false ? 1 : 0;
  else a[j] = Number(v);  // the typed array rounds (float32) or wraps (int32) on store
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
    out.copy_(result);
  } finally {
    result.dispose();
  }
  return out;
}
