// Calling ops of built extensions from JS: loading a library (the built-in
// ops, an ordinary library too, before any user's), the runtime the generated
// bindings use, and generic op functions built from descriptors (for gx.load
// and for libraries without generated bindings).
import fs from 'fs';
import path from 'path';

import { binaryCandidates, binaryOrigin, findBinary } from '../platform/binaries';
import { logger } from '../platform/log';
import {
  native, type NativeExtensionDescriptor, type NativeOpArg, type NativeOpDescriptor, type NativeTensor,
} from '../core/native';
import { recordExtensionCall, registerAutograd, shareAutograd } from '../tape/function';
import { derivativeSpec, parseDerivative } from '../tape/schema-derivative';
import { parseDevice, type Device } from '../core/device';
import { isSchemaType, SCHEMA_TYPES, type ArgConverter, type ResultConverter } from '../generated/schema-types';
import { pooledHandle, stageSpare } from '../core/handle-pool';
import { STAGED_OP_ARGS, stageInt, stageOptional, stagingArea } from '../core/staging';
import { dtypeCode, isDType } from '../core/dtype';
import { checkKeys, tooManyArguments } from '../core/options';
import { Tensor } from '../core/tensor';

export type OpArgDescriptor = NativeOpArg;
export type OpDescriptor = NativeOpDescriptor;
export type ExtensionDescriptor = NativeExtensionDescriptor;

/** An op as a plain function: positional arguments, then an options object for keyword-only ones. */
export type OpFunction = (...args: unknown[]) => unknown;

export interface ExtensionLibrary {
  readonly path: string;
  readonly ops: readonly OpDescriptor[];
  /** The ops as functions, by camelCase name (add_gpu -> addGpu). */
  readonly functions: Readonly<Record<string, OpFunction>>;
  /** The registry id of an op, by its schema name; throws naming the library when absent. */
  opId(name: string): number;
}

/** add_gpu -> addGpu, the name generated bindings and gx.load use. */
export function camelCase(name: string): string {
  if (arguments.length > 1) tooManyArguments('gx.camelCase', '(name)', arguments.length - 1, arguments[1]);
  return name.replace(/_+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

// --- the runtime of generated bindings ----------------------------------------

function tensorArg(x: unknown, fn: string, name: string): NativeTensor {
  if (x instanceof Tensor) return x.handle(fn);
  // The core's words for a missing scalar argument, so both kinds read alike.
  if (x === undefined) throw new TypeError(`${fn}: missing required argument '${name}' (Tensor)`);
  throw new TypeError(`${fn}: argument '${name}' must be a Tensor, got ${describe(x)}`);
}

function optionalTensorArg(x: unknown, fn: string, name: string): NativeTensor | undefined {
  return x === undefined || x === null ? undefined : tensorArg(x, fn, name);
}

function tensorListArg(xs: unknown, fn: string, name: string): NativeTensor[] {
  if (!Array.isArray(xs)) throw new TypeError(`${fn}: argument '${name}' must be an array of Tensors, got ${describe(xs)}`);
  return xs.map((x, i) => tensorArg(x, fn, `${name}[${i}]`));
}

/** A device argument (NOTE [ Handles and devices in schemas ] in csrc/core/schema.h) as the core reads it: 'cpu' or 'cuda:N'. */
function deviceArg(x: unknown, fn: string, name: string): string {
  if (x === undefined) throw new TypeError(`${fn}: missing required argument '${name}' (Device)`);
  return parseDevice(x, `${fn}: argument '${name}'`).toString();
}

function optionalDeviceArg(x: unknown, fn: string, name: string): string | undefined {
  return x === undefined || x === null ? undefined : deviceArg(x, fn, name);
}

/** Each converter the schema type table names for an argument (a type without one is passed as it is). */
const ARG_CONVERTERS: { readonly [K in ArgConverter]: (x: unknown, fn: string, name: string) => unknown } = {
  tensor: tensorArg,
  optionalTensor: optionalTensorArg,
  tensorList: tensorListArg,
  device: deviceArg,
  optionalDevice: optionalDeviceArg,
};

/**
 * An op call whose returned tensor goes into a pooled handle when there is one
 * (NOTE [ Recycled handles ]): passed after the arguments, flagged in the
 * staging area, so no new handle is made.
 */
function callOp(id: number, ...args: unknown[]): unknown {
  const spare = pooledHandle();
  if (spare === undefined) return native.callOp(id, ...args);
  stageSpare();
  return native.callOp(id, ...args, spare);
}

/**
 * A staged op call (NOTE [ Staged op calls ] in csrc/binding/op_values.cpp):
 * the op's non-tensor arguments already staged (the stage* functions below),
 * its tensors passed here, up to four, with no rest array: a tensor the op
 * does not have is left undefined. The spare handle goes first.
 */
function callStaged(id: number, t0?: unknown, t1?: unknown, t2?: unknown, t3?: unknown): unknown {
  const spare = pooledHandle();
  if (spare === undefined) return native.callOpStaged(id, t0, t1, t2, t3);
  stageSpare();
  return native.callOpStaged(id, spare, t0, t1, t2, t3);
}

// Each stage* function puts one argument of a user's op in its slots (value and tag, at `k` from
// STAGED_OP_ARGS), checked with the core's words for a JS value (`op` is the op's qualified name): the
// generated bindings pass the user's values. Absent (undefined, null) is tag 0: the default, None for
// `T?`, else the core's missing-argument error.

/** A JS value as the core's messages show it (js_type_of in csrc/binding/op_values.cpp). */
function coreDescribe(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  switch (typeof x) {
    case 'number': return `number ${String(x)}`;
    case 'string': return `string "${x}"`;
    case 'boolean': return String(x);
    case 'bigint': return 'bigint';
    case 'object': return 'an object';
    case 'function': return 'a function';
    default: return 'undefined';
  }
}

function stageFloat(x: unknown, op: string, name: string, k: number): void {
  if (typeof x === 'number' || x === undefined || x === null) stageOptional(stagingArea(), STAGED_OP_ARGS + k, x);
  else throw new TypeError(`${op}: argument '${name}' must be a number, got ${coreDescribe(x)}`);
}

function stageIntArg(x: unknown, op: string, name: string, k: number): void {
  if (typeof x === 'number') {
    if (!Number.isInteger(x)) throw new TypeError(`${op}: argument '${name}' must be an integer, got ${coreDescribe(x)}`);
    if (!Number.isSafeInteger(x)) throw new RangeError(`${op}: argument '${name}' is beyond 2^53; pass a bigint`);
  } else if (typeof x !== 'bigint' && x !== undefined && x !== null) {
    throw new TypeError(`${op}: argument '${name}' must be an integer, got ${coreDescribe(x)}`);
  }
  stageInt(stagingArea(), STAGED_OP_ARGS + k, x);
}

function stageBool(x: unknown, op: string, name: string, k: number): void {
  if (typeof x === 'boolean' || x === undefined || x === null) stageOptional(stagingArea(), STAGED_OP_ARGS + k, x);
  else throw new TypeError(`${op}: argument '${name}' must be a boolean, got ${coreDescribe(x)}`);
}

/** A dtype by name, or by its code (which the core checks). */
function stageDType(x: unknown, op: string, name: string, k: number): void {
  let v: number | null | undefined;
  if (typeof x === 'string') {
    if (!isDType(x)) throw new TypeError(`${op}: argument '${name}': unknown dtype "${x}"`);
    v = dtypeCode(x);
  } else if (typeof x === 'number' || x === undefined || x === null) {
    v = x;
  } else {
    throw new TypeError(`${op}: argument '${name}' must be a dtype name (or its code), got ${coreDescribe(x)}`);
  }
  stageOptional(stagingArea(), STAGED_OP_ARGS + k, v);
}

function wrap(h: unknown): Tensor {
  return new Tensor(h as NativeTensor);
}

function wrapOptional(h: unknown): Tensor | undefined {
  return h === null || h === undefined ? undefined : wrap(h);
}

function wrapList(hs: unknown): Tensor[] {
  return (hs as unknown[]).map(wrap);
}

function wrapDevice(d: unknown): Device {
  return parseDevice(d, 'gpuext');
}

/** Each converter the schema type table names for a result (a type without one is returned as it is). */
const RESULT_CONVERTERS: { readonly [K in ResultConverter]: (x: unknown) => unknown } = { wrap, wrapOptional, wrapList, wrapDevice };

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? `an object (${Object.prototype.toString.call(x)})` : `${typeof x} ${String(x)}`;
}

/** Generated bindings' check of an options object of keyword-only arguments (lib/core/options.ts). */
function keywordOptions(opts: unknown, fn: string, names: readonly string[]): Record<string, unknown> {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object' || Array.isArray(opts)) {
    throw new TypeError(`${fn}: keyword-only arguments (${names.join(', ')}) go in an options object, got ${describe(opts)}`);
  }
  checkKeys(opts, fn, names);
  return opts as Record<string, unknown>;
}

/** Whether an argument may be left out: it has a default or is optional (`Tensor?`, `int?`). */
export function isOptionalArg(a: OpArgDescriptor): boolean {
  return a.default !== undefined || a.type.endsWith('?');
}

/**
 * How many leading positional arguments are required: all but the tail of
 * optional ones (an optional argument before a required one must still be
 * passed, as undefined). The generated TypeScript marks the tail with `?`.
 */
export function requiredPositionals(positional: readonly OpArgDescriptor[]): number {
  let n = positional.length;
  while (n > 0 && isOptionalArg(positional[n - 1])) n--;
  return n;
}

/** How many arguments a call of `op` takes: required positionals, up to every positional plus the options object. */
export function arityBounds(op: OpDescriptor): { min: number; max: number } {
  const positional = op.args.filter((a) => !a.kwOnly);
  const keyword = op.args.filter((a) => a.kwOnly);
  const min = keyword.some((a) => !isOptionalArg(a)) ? positional.length + 1 : requiredPositionals(positional);
  return { min, max: positional.length + (keyword.length > 0 ? 1 : 0) };
}

/** The error of a call of `op` (as `fn`) with `given` arguments, outside arityBounds. */
function arityError(op: OpDescriptor, fn: string, given: number): TypeError {
  const { min, max } = arityBounds(op);
  const schema = `schema: ${op.schema}`;
  if (given > max) {
    const n = `${min === max ? '' : 'at most '}${max} argument${max === 1 ? '' : 's'}`;
    return new TypeError(`${fn}: takes ${n} but ${given} ${given === 1 ? 'was' : 'were'} given (${schema})`);
  }
  const positional = op.args.filter((a) => !a.kwOnly);
  if (given < positional.length) {
    const a = positional[given];
    return new TypeError(`${fn}: missing required argument '${a.name}' (${a.type}); ${schema}`);
  }
  const names = op.args.filter((a) => a.kwOnly && !isOptionalArg(a)).map((a) => `'${a.name}'`);
  return new TypeError(`${fn}: missing the options object with required keyword-only argument${names.length === 1 ? '' : 's'} ` +
    `${names.join(', ')}; ${schema}`);
}

/** Generated bindings' arity error (they check arguments.length inline and call this only when it is wrong). */
function arity(lib: ExtensionLibrary, name: string, given: number): never {
  const op = lib.ops.find((o) => o.name === name);
  if (op === undefined) throw new Error(`${lib.path}: defines no op '${name}'; rebuild with \`npx gpuext build\``);
  throw arityError(op, camelCase(name), given);
}

/** What generated bindings call; not for direct use. */
export const extensionRuntime = {
  options: keywordOptions,
  arity,
  load: loadLibrary,
  call: callOp,
  callStaged,
  stageFloat,
  stageInt: stageIntArg,
  stageBool,
  stageDType,
  // The converters generated bindings call by the names the schema type table gives (lib/toolkit/codegen.ts).
  ...ARG_CONVERTERS,
  ...RESULT_CONVERTERS,
  /** Records the call on autograd's tape when the op has a registered gradient (gx.autograd.registerAutograd). */
  recorded: recordExtensionCall,
  /** A generated function records with the derivative declared beside its op's schema (NOTE [ Derivatives beside a user's schema ]). */
  declared(fn: object, library: ExtensionLibrary, name: string): void {
    shareAutograd(library.functions[camelCase(name)], fn);
  },
};

// --- generic op functions -------------------------------------------------------

type ArgConversion = (x: unknown, fn: string, name: string) => unknown;
type ResultConversion = (x: unknown) => unknown;

const passArg: ArgConversion = (x) => x;
const passResult: ResultConversion = (x) => (x === null ? undefined : x);

/** How an argument of `type` is converted: the runtime's converter its schema type names, else as it is. */
function argConversion(type: string): ArgConversion {
  const convert = isSchemaType(type) ? SCHEMA_TYPES[type].convert : undefined;
  return convert === undefined ? passArg : ARG_CONVERTERS[convert];
}

/** How a result of `type` is converted (None becomes undefined where the type has no converter). */
function resultConversion(type: string): ResultConversion {
  const convert = isSchemaType(type) ? SCHEMA_TYPES[type].wrap : undefined;
  return convert === undefined ? passResult : RESULT_CONVERTERS[convert];
}

/** A function for one op, converting arguments and results by its descriptor (the conversions looked up once). */
export function opFunction(op: OpDescriptor): OpFunction {
  const fn = camelCase(op.name);
  const positional = op.args.filter((a) => !a.kwOnly);
  const keyword = op.args.filter((a) => a.kwOnly);
  const keywordNames = keyword.map((a) => a.name);
  const posConv = positional.map((a) => argConversion(a.type));
  const kwConv = keyword.map((a) => argConversion(a.type));
  const retConv = op.returns.map((r) => resultConversion(r.type));
  const { min, max } = arityBounds(op);
  const f = (...args: unknown[]): unknown => {
    if (args.length < min || args.length > max) throw arityError(op, fn, args.length);
    const values = positional.map((a, i) => posConv[i](args[i], fn, a.name));
    if (keyword.length > 0) {
      const o = keywordOptions(args[positional.length], fn, keywordNames);
      keyword.forEach((a, i) => values.push(kwConv[i](o[a.name], fn, a.name)));
    }
    const result = extensionRuntime.call(op.id, ...values);
    if (!op.returnsTuple) return op.returns.length === 0 ? undefined : recordExtensionCall(f, args, retConv[0](result));
    return recordExtensionCall(f, args, (result as unknown[]).map((r, i) => retConv[i](r)));
  };
  Object.defineProperty(f, 'name', { value: fn });
  return f;
}

const libraries = new Map<string, ExtensionLibrary>();
const loadLog = logger('load');
const blasLog = logger('blas');
/** The library whose ops were registered first under each GX_LIBRARY namespace. */
const namespaces = new Map<string, string>();

/** Op names by registry id, over the libraries loaded when it was made (opNameById remakes it when more are loaded). */
let opNames: { libraries: number; names: Map<number, string> } | undefined;

/**
 * The name of a loaded op by its registry id: 'add' for a built-in op,
 * 'my_ops::scale' for a library's (for gx.profiler's records).
 */
export function opNameById(id: number): string | undefined {
  if (opNames === undefined || (opNames.libraries !== libraries.size && !opNames.names.has(id))) {
    const names = new Map<number, string>();
    for (const lib of libraries.values()) {
      for (const op of lib.ops) names.set(op.id, op.qualifiedName.startsWith(`${BUILTIN_NAMESPACE}::`) ? op.name : op.qualifiedName);
    }
    opNames = { libraries: libraries.size, names };
  }
  return opNames.names.get(id);
}

/** The path of a loaded library with ops in namespace `ns`, or undefined when none has. */
export function namespaceOwner(ns: string): string | undefined {
  return namespaces.get(ns);
}

// --- the built-in ops: an ordinary library, loaded before any user's ---------------

/**
 * Where the built-in ops library is: GPUEXT_OPS_LIBRARY, else the one built
 * here (`<package>/ops/build/gx_ops.node`), else the prebuilt one
 * (lib/platform/binaries.ts); when none exists, the built path (for the error).
 */
export function opsLibraryPath(): string {
  const env = process.env.GPUEXT_OPS_LIBRARY;
  if (env) return path.resolve(env);
  return findBinary('ops') ?? binaryCandidates('ops')[0];
}

/** The GX_LIBRARY namespace of the built-in ops; no other library may take it. */
export const BUILTIN_NAMESPACE = 'gx_ops';

/** How to rebuild the built-in ops, for errors. */
export const BUILD_CMD = '`npm rebuild gpuext --build-from-source` (in a checkout of gpuext: `npm run build:ops`)';

let builtins: ExtensionLibrary | undefined;

/** The loaded built-in ops; `fn` names the caller in the error when they are missing. */
export function opsLibrary(fn: string): ExtensionLibrary {
  if (builtins !== undefined) return builtins;
  const file = opsLibraryPath();
  if (!fs.existsSync(file)) {
    const err = new Error(`${fn}: the built-in ops are not built (${file} is missing); build them with ${BUILD_CMD}`);
    (err as Error & { code: string }).code = 'GX_OPS_NOT_BUILT';
    throw err;
  }
  try {
    builtins = loadLibrary(file);
    loadLog('ops %s (%s)', file, binaryOrigin(file));
    if (blasLog.enabled) logBackends(builtins);
  } catch (e) {
    const err = new Error(`${fn}: cannot load the built-in ops from ${file}: ${e instanceof Error ? e.message : String(e)}; ` +
      `rebuild them with ${BUILD_CMD}`);
    (err as Error & { code: string }).code = 'GX_OPS_NOT_BUILT';
    throw err;
  }
  return builtins;
}

// The CPU BLAS is picked when first used (ops/linalg/blas.h); with its log on, it is picked
// (and said) as soon as the ops load, which costs a dlopen only when someone is reading the log.
function logBackends(lib: ExtensionLibrary): void {
  try {
    const text = String(native.callOp(lib.opId('backends')));
    blasLog('%s', text.split('\n').filter((l) => l.includes('=')).join(', '));
  } catch (e) {
    blasLog('cannot say which BLAS the ops use: %s', e instanceof Error ? e.message : String(e));
  }
}

/**
 * Loads the built-in ops if they are not loaded yet, before a user's library:
 * registered first, their names can never be taken by a user's op (one in
 * namespace gx_ops would otherwise make every built-in op fail to load for
 * the rest of the process). A missing or broken built-in library is not an
 * error here: the first op that needs it reports it, with the fix.
 */
export function loadBuiltinsFirst(): void {
  if (builtins !== undefined) return;
  try {
    opsLibrary('gx.loadLibrary');
  } catch {
    // reported when a built-in op is called (see above)
  }
}

function registerExtension(full: string): ExtensionDescriptor {
  if (full !== opsLibraryPath()) loadBuiltinsFirst();
  try {
    return native.loadExtension(full);
  } catch (e) {
    if (e instanceof Error && e.message.includes(`'${BUILTIN_NAMESPACE}::`)) {
      e.message += `; ${BUILTIN_NAMESPACE} is the namespace of gpuext's built-in ops: give the GX_LIBRARY block another namespace`;
    }
    throw e;
  }
}

/**
 * Loads a built extension (a `.node` file from `gpuext build`) and registers
 * its ops; loading the same file again returns the same library.
 * @example const lib = gx.loadLibrary('build/myops.node'); lib.functions.addGpu(a, b);
 */
export function loadLibrary(file: string): ExtensionLibrary {
  if (typeof file !== 'string') throw new TypeError(`gx.loadLibrary: path must be a string, got ${describe(file)}`);
  const full = path.resolve(file);
  const known = libraries.get(full);
  if (known !== undefined) return known;
  const desc = registerExtension(full);
  if (loadLog.enabled && full !== opsLibraryPath()) loadLog('extension %s (%d ops)', full, desc.ops.length);
  const functions: Record<string, OpFunction> = {};
  const ids = new Map<string, number>();
  for (const op of desc.ops) {
    functions[camelCase(op.name)] = opFunction(op);
    ids.set(op.name, op.id);
    const ns = op.qualifiedName.slice(0, op.qualifiedName.indexOf('::'));
    if (!namespaces.has(ns)) namespaces.set(ns, full);
  }
  // Derivatives declared beside the schemas (NOTE [ Derivatives beside a user's schema ]).
  for (const op of desc.ops) {
    if (op.derivative === undefined) continue;
    const spec = derivativeSpec(op, parseDerivative(op, desc.ops), (name, args) => functions[camelCase(name)](...args));
    registerAutograd(functions[camelCase(op.name)], spec);
  }
  const lib: ExtensionLibrary = {
    path: full,
    ops: Object.freeze(desc.ops),
    functions: Object.freeze(functions),
    opId(name: string): number {
      const id = ids.get(name);
      if (id === undefined) {
        throw new Error(`${full}: defines no op '${name}' (it has ${desc.ops.map((o) => o.name).join(', ')}); rebuild with \`npx gpuext build\``);
      }
      return id;
    },
  };
  libraries.set(full, lib);
  return lib;
}
