// gx.vectorize's translator side, loaded only when a translation misses the
// cache (NOTE [ Translation cache ]): the scalar function typed, then emitted
// as the elementwise kernel's PTX (NOTE [ Elementwise PTX ]) or as a
// __device__ function for its CUDA source. The emitter of CUDA loads only
// when a source is asked for, and the CPU side (vectorize-cpu.ts) only for
// CPU tensors.
import { lazyModule } from '../platform/lazy';
import { Module } from './module';
import type { FnIR } from './ir';
import { typeFunction } from './typer-function';
import { strong, type Signature } from './types';
import type { Parsed } from './parse';
import { countTranslation, type Translation } from './translation-cache';
import { PTX_MIN_CAPABILITY } from './emit-ptx';
import { emitElementwisePtx } from './ptx-elementwise';
import { PtxUnsupported } from './ptx-isa';
import type { ElementwiseSourceIn } from '../rtc/elementwise-codegen';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const cudaEmitter = lazyModule(() => require('./emit-cuda') as typeof import('./emit-cuda'));

export { parse } from './parse';
export type { Signature } from './types';

/** The function typed per signature, once for the CUDA source and the PTX alike (with the module its typing filled). */
const typedFunctions = new WeakMap<Parsed, Map<string, { fn: FnIR; module: Module }>>();
export function typed(p: Parsed, name: string, s: Signature, fnName: string): { fn: FnIR; module: Module } {
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
  const code = cudaEmitter().emitDevice(fn, module);
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
