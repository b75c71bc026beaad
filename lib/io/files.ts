// gx.save, gx.loadTensors, gx.loadTensor and gx.inspectTensors: tensors to
// and from files in the safetensors, .npy and .npz formats, chosen by the
// file's extension (or options.format; when loading a file of another
// extension, by its first bytes).
//
// Every save is atomic (./atomic.ts) and goes one tensor at a time, a bounded
// chunk at a time (NOTE [ Chunked tensor I/O ] in ./tensor-data.ts); every
// load checks the file before trusting it, and a failed load leaves no
// tensor behind.
import { promises as fsp } from 'fs';
import type { FileHandle } from 'fs/promises';
import * as path from 'path';

import { parseDevice, type Device, type DeviceLike } from '../core/device';
import { checkDevice } from '../core/gpus';
import { booleanOption, checkOptions, optionKeys, tooManyArguments } from '../core/options';
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { lazyModule } from '../platform/lazy';
import { fileError, withFileContext, type FileContext } from './errors';
import { checkBound, loadBound } from './limits';
import { LONE_TENSOR_NAME, releaseSources, takeSources } from './sources';
import type { FileFormat, NamedInfo, TensorFileInfo, TensorInfo } from './types';

// The formats' readers and writers (and the atomic write's crypto) load with the first save, load or
// inspect, not with gpuext (NOTE [ Lazy entry ] in lib/README.md).
/* eslint-disable @typescript-eslint/no-require-imports */
const atomic = lazyModule(() => require('./atomic') as typeof import('./atomic'));
const npy = lazyModule(() => require('./npy') as typeof import('./npy'));
const npz = lazyModule(() => require('./npz') as typeof import('./npz'));
const safetensors = lazyModule(() => require('./safetensors') as typeof import('./safetensors'));
/* eslint-enable @typescript-eslint/no-require-imports */

export type { FileFormat, TensorFileInfo, TensorInfo };

/** Options of gx.save. */
export interface SaveOptions {
  /** The file's format; by default the path's extension says (.npy, .npz; any other: safetensors). */
  format?: FileFormat;
  /** safetensors only: the header's "__metadata__", strings to strings (e.g. { format: 'pt' }, or a Map). */
  metadata?: Record<string, string> | ReadonlyMap<string, string>;
  /** .npz only: deflate each array, as np.savez_compressed (default false: stored, as np.savez). */
  compressed?: boolean;
}

/** Options of gx.loadTensors and gx.loadTensor. */
export interface LoadTensorsOptions {
  /** Where the tensors go: 'cpu' (default), 'cuda', 'cuda:N' or a Device. */
  device?: DeviceLike;
  /** The file's format; by default the extension says (.safetensors, .npy, .npz), else the file's first bytes. */
  format?: FileFormat;
  /**
   * The most bytes the load may read into tensors, in all, checked from the
   * headers before anything is allocated (Infinity: no bound). By default the
   * file's size or, when larger, half the machine's memory up to 8 GiB: only
   * deflated .npz entries can hold more than their file's size (up to 1032
   * times), and a zip bomb is refused within this bound.
   */
  maxBytes?: number;
}

/** Options of gx.inspectTensors. */
export interface InspectTensorsOptions {
  /** As in LoadTensorsOptions. */
  format?: FileFormat;
}

const SAVE_KEYS = optionKeys<SaveOptions>({ format: true, metadata: true, compressed: true });
const LOAD_KEYS = optionKeys<LoadTensorsOptions>({ device: true, format: true, maxBytes: true });
const INSPECT_KEYS = optionKeys<InspectTensorsOptions>({ format: true });

const FORMATS: readonly FileFormat[] = ['safetensors', 'npy', 'npz'];

function checkPath(p: unknown, fn: string): string {
  if (typeof p !== 'string' || p === '') throw new TypeError(`${fn}: path must be a non-empty string, got ${describeValue(p)}`);
  return p;
}

function parseFormat(f: unknown, fn: string): FileFormat {
  if (!FORMATS.includes(f as FileFormat)) {
    throw new TypeError(`${fn}: unknown format ${typeof f === 'string' ? JSON.stringify(f) : describeValue(f)}; expected one of ${FORMATS.join(', ')}`);
  }
  return f as FileFormat;
}

/** The format a path's extension names, if any. */
function formatOfPath(p: string): FileFormat | undefined {
  const ext = path.extname(p).toLowerCase();
  return ext === '.safetensors' ? 'safetensors' : ext === '.npy' ? 'npy' : ext === '.npz' ? 'npz' : undefined;
}

/** The format a file's first bytes say: NumPy's magic, a zip's signatures, else safetensors (which has no magic). */
async function sniffFormat(fh: FileHandle): Promise<FileFormat> {
  const head = Buffer.alloc(6);
  const { bytesRead } = await fh.read(head, 0, 6, 0);
  const start = head.subarray(0, bytesRead).toString('latin1');
  if (start === '\x93NUMPY') return 'npy';
  if (start.startsWith('PK\x03\x04') || start.startsWith('PK\x05\x06')) return 'npz';
  return 'safetensors';
}

/** Opens `ctx.path` for reading and runs `body` on it with its size and format; closes it however `body` ends. */
async function withFile<T>(ctx: FileContext, format: FileFormat | undefined,
  body: (fh: FileHandle, size: number, format: FileFormat) => Promise<T>): Promise<T> {
  let fh: FileHandle | undefined;
  try {
    fh = await fsp.open(ctx.path, 'r');
    const stat = await fh.stat();
    if (!stat.isFile()) throw fileError(ctx, 'is not a regular file');
    return await body(fh, stat.size, format ?? formatOfPath(ctx.path) ?? (await sniffFormat(fh)));
  } catch (err) {
    throw withFileContext(err, ctx);
  } finally {
    await fh?.close();
  }
}

/** What a load reads: where to, and within which bound (options.maxBytes; NOTE [ Bounded loads ] in limits.ts). */
interface LoadTarget {
  device: Device;
  maxBytes?: number;
}

/** The tensors of an open file of `format`, read one at a time onto `to.device`. */
function tensorsOf(format: FileFormat, fh: FileHandle, size: number, ctx: FileContext, to: LoadTarget): AsyncGenerator<[string, Tensor]> {
  const bound = loadBound(to.maxBytes, size);
  if (format === 'npz') return npz().loadNpz(fh, size, ctx, to.device, bound);
  // Data held as it is: at most the file's bytes.
  checkBound(ctx, size, bound, 'the file has');
  return format === 'npy' ? npy().loadNpyFile(fh, size, ctx, to.device) : safetensors().loadSafetensors(fh, size, ctx, to.device);
}

/** The checked options of a load, and its device (checked to exist). */
function loadOptions(opts: unknown, fn: string): LoadTarget & { format?: FileFormat } {
  const o = checkOptions<LoadTensorsOptions>(opts, fn, LOAD_KEYS);
  const device = parseDevice(o.device, fn);
  checkDevice(device, fn);
  const { maxBytes } = o;
  if (maxBytes !== undefined && !(typeof maxBytes === 'number' && maxBytes >= 0 && (Number.isSafeInteger(maxBytes) || maxBytes === Infinity))) {
    throw new TypeError(`${fn}: options.maxBytes must be a non-negative integer or Infinity, got ${describeValue(maxBytes)}`);
  }
  return { device, maxBytes, format: o.format === undefined ? undefined : parseFormat(o.format, fn) };
}

/** Sets `record[key]` as an own property, whatever the key ("__proto__" included). */
function define<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Saves a tensor, or a record of named tensors (a plain object or a Map of
 * names to tensors), to `path`. The format comes
 * from the extension: `.npy` (one tensor), `.npz` (NumPy's zip of arrays),
 * anything else safetensors (or options.format says). A lone tensor is stored
 * under the name 'tensor' in safetensors and 'arr_0' in .npz (np.savez's
 * name). Views and transposes save their values in C order. The write is
 * atomic: a temporary file beside `path`, renamed over it once complete.
 * NumPy has no bfloat16: .npy and .npz refuse it (safetensors has BF16).
 * @example
 * await gx.save('model.safetensors', { weight: w, bias: b }, { metadata: { step: '100' } });
 * await gx.save('x.npy', x);
 */
export async function save(path: string, data: Tensor | Record<string, Tensor> | ReadonlyMap<string, Tensor>, opts?: SaveOptions): Promise<void> {
  const fn = 'gx.save';
  if (arguments.length > 3) tooManyArguments(fn, '(path, data, { format, metadata, compressed }?)', arguments.length - 3, arguments[3]);
  checkPath(path, fn);
  const o = checkOptions<SaveOptions>(opts, fn, SAVE_KEYS);
  const format = o.format !== undefined ? parseFormat(o.format, fn) : formatOfPath(path) ?? 'safetensors';
  if (o.metadata !== undefined && format !== 'safetensors') throw new TypeError(`${fn}: options.metadata is for safetensors files; ${format} has no metadata`);
  if (o.compressed !== undefined && format !== 'npz') throw new TypeError(`${fn}: options.compressed is for .npz files, not ${format}`);
  if (o.compressed !== undefined) booleanOption(fn, 'compressed', o.compressed);
  if (format === 'npy' && !(data instanceof Tensor) && data !== null && typeof data === 'object') {
    throw new TypeError(`${fn}: an .npy file holds one array; pass one tensor, or save a record as .npz or .safetensors`);
  }
  const sources = takeSources(data, fn, format === 'npz' ? npz().NPZ_NAME : LONE_TENSOR_NAME);
  try {
    const ctx = { fn, path };
    if (format === 'safetensors') {
      const metadata = safetensors().checkSafetensors(sources, o.metadata, fn);
      await atomic().writeAtomically(ctx, (fh) => safetensors().saveSafetensors(fh, sources, metadata));
    } else if (format === 'npz') {
      npy().checkNpyDtypes(sources, fn, 'an .npz file', false);
      await atomic().writeAtomically(ctx, (fh) => npz().saveNpz(fh, sources, o.compressed === true));
    } else {
      npy().checkNpyDtypes(sources, fn, 'an .npy file', true);
      await atomic().writeAtomically(ctx, (fh) => npy().saveNpyFile(fh, sources[0]));
    }
  } finally {
    releaseSources(sources);
  }
}

/**
 * The tensors of a safetensors, .npy or .npz file, by name, in the order
 * their data lies in the file, on options.device ('cpu' by default; a GPU
 * gets each tensor as soon as it is read). An .npy file's one array is
 * named 'tensor'; an .npz file's arrays are named as np.load names them.
 * Fortran-order and big-endian .npy arrays load as their values in C order.
 * @example
 * const { weight, bias } = await gx.loadTensors('model.safetensors', { device: 'cuda' });
 */
export async function loadTensors(path: string, opts?: LoadTensorsOptions): Promise<Record<string, Tensor>> {
  const fn = 'gx.loadTensors';
  if (arguments.length > 2) tooManyArguments(fn, '(path, { device, format, maxBytes }?)', arguments.length - 2, arguments[2]);
  const ctx = { fn, path: checkPath(path, fn) };
  const { format, ...to } = loadOptions(opts, fn);
  const out: Record<string, Tensor> = {};
  try {
    await withFile(ctx, format, async (fh, size, f) => {
      for await (const [name, t] of tensorsOf(f, fh, size, ctx, to)) define(out, name, t);
    });
  } catch (err) {
    for (const t of Object.values(out)) t.dispose();
    throw err;
  }
  return out;
}

/**
 * The one tensor of a file (an .npy file, or a safetensors or .npz file
 * holding a single tensor); more than one is an error (use gx.loadTensors).
 * @example const x = await gx.loadTensor('x.npy', { device: 'cuda:0' });
 */
export async function loadTensor(path: string, opts?: LoadTensorsOptions): Promise<Tensor> {
  const fn = 'gx.loadTensor';
  if (arguments.length > 2) tooManyArguments(fn, '(path, { device, format, maxBytes }?)', arguments.length - 2, arguments[2]);
  const ctx = { fn, path: checkPath(path, fn) };
  const { format, ...to } = loadOptions(opts, fn);
  return withFile(ctx, format, async (fh, size, f) => {
    const tensors = tensorsOf(f, fh, size, ctx, to);
    const first = await tensors.next();
    if (first.done) throw fileError(ctx, 'holds no tensor');
    const second = await tensors.next().catch((err: unknown) => {
      first.value[1].dispose();
      throw err;
    });
    if (!second.done) {
      first.value[1].dispose();
      second.value[1].dispose();
      await tensors.return(undefined);
      throw fileError(ctx, `holds more than one tensor ('${first.value[0]}', '${second.value[0]}', ...); load them with gx.loadTensors`);
    }
    return first.value[1];
  });
}

/**
 * What a safetensors, .npy or .npz file holds, read from its headers alone:
 * each tensor's dtype and shape, and safetensors' metadata.
 * @example const { tensors, metadata } = await gx.inspectTensors('model.safetensors');
 */
export async function inspectTensors(path: string, opts?: InspectTensorsOptions): Promise<TensorFileInfo> {
  const fn = 'gx.inspectTensors';
  if (arguments.length > 2) tooManyArguments(fn, '(path, { format }?)', arguments.length - 2, arguments[2]);
  const ctx = { fn, path: checkPath(path, fn) };
  const o = checkOptions<InspectTensorsOptions>(opts, fn, INSPECT_KEYS);
  return withFile(ctx, o.format === undefined ? undefined : parseFormat(o.format, fn), async (fh, size, format) => {
    let found: { tensors: NamedInfo[]; metadata: Record<string, string> };
    if (format === 'safetensors') found = await safetensors().inspectSafetensors(fh, size, ctx);
    else found = { tensors: format === 'npy' ? await npy().inspectNpyFile(fh, size, ctx) : await npz().inspectNpz(fh, size, ctx), metadata: {} };
    const tensors: Record<string, TensorInfo> = {};
    for (const { name, dtype, shape } of found.tensors) define(tensors, name, { dtype, shape });
    return { format, tensors, metadata: found.metadata };
  });
}
