// The translator's side of gx.jit.rawkernel: parse, type, emit CUDA, or type
// and compile for the simulator. rawkernel.ts loads this module (and through
// it acorn, the typer, the emitter and the interpreter) only when a
// translation misses the cache (NOTE [ Translation cache ]), so a kernel
// found there costs none of it.
import { lazyModule } from '../platform/lazy';
import { typeHeaders } from '../rtc/params';
import type { CompiledKernel } from './interpret';
import type { ParsedFunction } from './source';
import type { Parsed } from './parse';
import { cName, emitKernelBody, paramNames, type ParamArrays } from './emit-cuda';
import { emitPtxKernel, PTX_MIN_CAPABILITY, type PtxParams } from './emit-ptx';
import { PtxUnsupported } from './ptx-isa';
import type { ArrayDecl, FnIR } from './ir';
import { Module } from './module';
import { typeFunction, type ParamSpec } from './typer-function';
import { C_TYPE, elementCType } from './types';
import { countTranslation, type ArgSpec, type FunctionInfo, type PlanEntry, type Translation } from './translation-cache';

// The simulator and the interpreter load with the first kernel run on CPU tensors, not with a translation for CUDA.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const simulator = lazyModule(() => require('./simulator') as typeof import('./simulator'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const interpreter = lazyModule(() => require('./interpret') as typeof import('./interpret'));

export { parse, type Parsed } from './parse';

/** Runs a compiled kernel on CPU tensors (simulator.ts). */
export const simulate: typeof import('./simulator').simulate = (...args) => simulator().simulate(...args);

/** The typer's view of the parameters of `specs`: tensors as arrays, integral numbers int64, fractional ones weak float64. */
function paramSpecs(f: ParsedFunction, specs: readonly ArgSpec[]): ParamSpec[] {
  return specs.map((s, i): ParamSpec => {
    if (s.kind === 'number') return { kind: 'number', ty: { dtype: s.dtype, weak: s.dtype === 'float64' } };
    const arr: ArrayDecl = { id: -1 - i, label: f.params[i] ?? `arg${i}`, dtype: s.dtype, rank: s.rank, space: 'param', param: i, contiguous: s.contiguous };
    return { kind: 'array', arr };
  });
}

/** The parameter arrays of the emitted kernel: which extents and strides the body used, per argument. */
function arrayNames(specs: readonly ArgSpec[], debug: boolean) {
  const used = specs.map((s) => ({ dims: new Set<number>(debug && s.kind === 'tensor' ? Array.from({ length: s.rank }, (_, d) => d) : []), strides: new Set<number>() }));
  const dim = (a: ArrayDecl, d: number): string => {
    used[a.param ?? 0].dims.add(d);
    return paramNames(a.label).dim(d);
  };
  const arrays: ParamArrays = {
    ptr: (a) => paramNames(a.label).ptr,
    dim,
    stride: (a, d) => {
      if (!a.contiguous) {
        used[a.param ?? 0].strides.add(d);
        return paramNames(a.label).stride(d);
      }
      if (d === a.rank - 1) return '1';
      return Array.from({ length: a.rank - 1 - d }, (_, k) => dim(a, d + 1 + k)).join(' * ');
    },
  };
  return { used, arrays };
}

/** The C names of the parameters, which fresh names must not take. */
function reservedNames(f: ParsedFunction, specs: readonly ArgSpec[]): Set<string> {
  const reserved = new Set<string>();
  specs.forEach((s, i) => {
    const p = f.params[i];
    if (s.kind === 'number') return reserved.add(cName(p));
    const n = paramNames(p);
    reserved.add(n.ptr);
    for (let d = 0; d < s.rank; d++) reserved.add(n.dim(d)).add(n.stride(d));
  });
  return reserved;
}

/** The generated source (and PTX, `ptx` true and every node has a PTX face) and launch plan for arguments of `specs`. */
export function generate(p: Parsed, name: string, specs: readonly ArgSpec[], debug: boolean, api: string, ptx = false): Translation {
  countTranslation();
  const f = p.parsed;
  const module = new Module(debug);
  const fn = typeFunction(f, 'kernel', name, paramSpecs(f, specs), undefined, p.lookup(), module, api);
  const { used, arrays } = arrayNames(specs, debug);
  const body = emitKernelBody(fn, module, arrays, reservedNames(f, specs));
  const cParams: string[] = [];
  const types: string[] = [];
  const plan: PlanEntry[] = [];
  const regs: string[] = [];
  const add = (type: string, cname: string, entry: PlanEntry): void => {
    cParams.push(`${type} ${cname}`);
    types.push(type);
    plan.push(entry);
    regs.push(`%${cname}`);
  };
  const paramList = (): void => specs.forEach((s, i) => {
    const param = f.params[i];
    if (s.kind === 'number') return add(C_TYPE[s.dtype], cName(param), [i, 'value', 0]);
    const n = paramNames(param);
    add(`${elementCType(s.dtype)}*`, n.ptr, [i, 'ptr', 0]);
    for (const d of [...used[i].dims].sort()) add('long long', n.dim(d), [i, 'dim', d]);
    for (const d of [...used[i].strides].sort()) add('long long', n.stride(d), [i, 'stride', d]);
  });
  // The PTX body records the extents it reads in `used` too, so the parameter list is made after both bodies.
  const ptxText = ptx && !debug ? ptxKernel(fn, name, used, () => {
    paramList();
    return types.map((type, k) => ({ type, reg: regs[k] }));
  }) : undefined;
  if (ptxText === undefined) paramList();
  if (debug) {
    cParams.push('long long* gx_err');
    types.push('long long*');
  }
  const headers = typeHeaders(specs.flatMap((s) => (s.kind === 'tensor' ? [s.dtype] : [])));
  const source = `${headers}${module.preamble()}extern "C" __global__ void ${name}(${cParams.join(', ')}) {\n${body.join('\n')}\n}\n`;
  const t: Translation = { source, types, plan, sites: module.sites };
  if (ptxText !== undefined) t.ptx = { text: ptxText, minCapability: PTX_MIN_CAPABILITY };
  return t;
}

/** The kernel as PTX, or undefined when a node of it has no PTX face (NOTE [ PTX path ]): it is then compiled from its CUDA source alone. */
function ptxKernel(fn: FnIR, name: string, used: ReturnType<typeof arrayNames>['used'], list: () => { type: string; reg: string }[]): string | undefined {
  const params: PtxParams = {
    ptr: (a) => `%${paramNames(a.label).ptr}`,
    dim: (a, d) => {
      used[a.param ?? 0].dims.add(d);
      return `%${paramNames(a.label).dim(d)}`;
    },
    stride: (a, d) => {
      used[a.param ?? 0].strides.add(d);
      return `%${paramNames(a.label).stride(d)}`;
    },
    value: (v) => `%${cName(v.name)}`,
  };
  try {
    return emitPtxKernel(fn, name, params, list);
  } catch (e) {
    if (e instanceof PtxUnsupported) return undefined;
    throw e;
  }
}

/** The kernel typed for `specs` as for CUDA (so refused where CUDA refuses it) and compiled for the simulator. */
export function simulated(p: Parsed, name: string, specs: readonly ArgSpec[], debug: boolean, api: string): CompiledKernel {
  const fn = typeFunction(p.parsed, 'kernel', name, paramSpecs(p.parsed, specs), undefined, p.lookup(), new Module(debug), api);
  return interpreter().compileKernel(fn, debug);
}
