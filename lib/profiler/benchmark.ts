// gx.benchmark: time a function's CPU and GPU cost per run, like
// cupyx.profiler.benchmark.
//
// Each timed run records a timing Event on the device's current stream, reads
// the host clock, calls fn, reads the host clock again, records a second
// Event and waits for it. The CPU time is the host time spent inside fn (what
// launching costs); the GPU time is what the stream took from the first event
// to the second (what the queued work costs, including any wait for work
// queued before the run, which the warmup drains). One pair of events serves
// every run.
import { inspect } from 'util';

import { checkDevice, isAvailable } from '../core/gpus';
import { checkKeys, optionKeys } from '../core/options';
import { parseDevice, type Device, type DeviceLike } from '../core/device';
import { Event, currentStream } from '../core/stream';

export interface BenchmarkOptions {
  /** Untimed calls before the timed ones (default 10). */
  nWarmup?: number;
  /** Timed calls (default 100). */
  nRepeat?: number;
  /**
   * Stop after the run that takes the total timed duration (host time from
   * each run's start through its GPU work's end) past this many seconds, even
   * if fewer than nRepeat runs were made. At least one run is always made.
   */
  maxDuration?: number;
  /**
   * Where GPU time is measured: 'cuda' / 'cuda:N' (events on that device's
   * current stream) or 'cpu' (CPU time only). Default: 'cuda' (the current
   * device) when CUDA is available, else 'cpu'.
   */
  device?: DeviceLike;
  /** Label for toString() (default: fn.name, or '(anonymous)'). */
  name?: string;
}

/** Summary statistics of a series of times, in milliseconds. */
export interface BenchmarkStats {
  readonly min: number;
  readonly median: number;
  readonly mean: number;
  readonly max: number;
  /** Population standard deviation (numpy's default, as CuPy reports). */
  readonly std: number;
}

/** What gx.benchmark() measured. All times are in milliseconds. */
export interface BenchmarkResult {
  readonly name: string;
  /** The device GPU times were measured on; undefined when only CPU time was. */
  readonly device?: Device;
  /** Host time inside fn, one entry per timed run. */
  readonly cpuTimes: Float64Array;
  /** Stream time from before fn's work to after it, one entry per run; only with a CUDA device. */
  readonly gpuTimes?: Float64Array;
  readonly cpu: BenchmarkStats;
  /** Statistics of gpuTimes; only with a CUDA device. */
  readonly gpu?: BenchmarkStats;
  /** One line, like CuPy: `name :    CPU:  12.345 us   +/-  1.234 (min: ... / median: ... / max: ...) us     GPU-0: ...`. */
  toString(): string;
}

const FN = 'gx.benchmark';
const OPTION_KEYS = optionKeys<BenchmarkOptions>({ nWarmup: true, nRepeat: true, maxDuration: true, device: true, name: true });

function intOption(value: unknown, key: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const what = min === 0 ? 'a non-negative integer' : `an integer >= ${min}`;
    throw new RangeError(`${FN}: option '${key}' must be ${what}, got ${formatValue(value)}`);
  }
  return value;
}

function formatValue(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && 'then' in v && typeof v.then === 'function';
}

/** @internal min/median/mean/max/std of a non-empty series. */
export function stats(xs: Float64Array): BenchmarkStats {
  const n = xs.length;
  if (n === 0) return { min: NaN, median: NaN, mean: NaN, max: NaN, std: NaN };
  const s = Float64Array.from(xs).sort();
  const m = n >> 1;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += s[i];
  const mean = sum / n;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += (s[i] - mean) ** 2;
  return {
    min: s[0],
    median: n % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2,
    mean,
    max: s[n - 1],
    std: Math.sqrt(sq / n),
  };
}

const UNITS: readonly (readonly [string, number])[] = [['ns', 1e-6], ['us', 1e-3], ['ms', 1], ['s', 1e3]];

/** The unit (and its size in ms) in which `ms` reads as a number in [1, 1000), within ns..s. */
function unitFor(ms: number): readonly [string, number] {
  const a = Math.abs(ms);
  if (!Number.isFinite(a) || a === 0) return UNITS[1];
  for (let i = UNITS.length - 1; i >= 0; i--) if (a >= UNITS[i][1]) return UNITS[i];
  return UNITS[0];
}

/** `label:  mean unit   +/- std (min: ... / median: ... / max: ...) unit`, like CuPy's per-device part. */
function part(label: string, s: BenchmarkStats, n: number): string {
  const [unit, size] = unitFor(s.mean);
  const f = (ms: number, width: number): string => (ms / size).toFixed(3).padStart(width);
  let out = `${label}: ${f(s.mean, 9)} ${unit}`;
  if (n > 1) {
    out += `   +/- ${f(s.std, 6)} (min: ${f(s.min, 9)} / median: ${f(s.median, 9)} / max: ${f(s.max, 9)}) ${unit}`;
  }
  return out;
}

class Result implements BenchmarkResult {
  readonly cpu: BenchmarkStats;
  readonly gpu: BenchmarkStats | undefined;

  constructor(
    readonly name: string,
    readonly device: Device | undefined,
    readonly cpuTimes: Float64Array,
    readonly gpuTimes: Float64Array | undefined,
  ) {
    this.cpu = stats(cpuTimes);
    this.gpu = gpuTimes === undefined ? undefined : stats(gpuTimes);
  }

  toString(): string {
    const parts = [part('    CPU', this.cpu, this.cpuTimes.length)];
    if (this.gpu !== undefined && this.gpuTimes !== undefined && this.device !== undefined) {
      parts.push(part(`    GPU-${this.device.index}`, this.gpu, this.gpuTimes.length));
    }
    return `${this.name.padEnd(20)}:${parts.join(' ')}`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * Times `fn`: `nWarmup` untimed calls, then `nRepeat` timed ones (fewer when
 * `maxDuration` runs out), each measured on the host (time inside fn) and, on
 * a CUDA device, on the GPU (timing events recorded on the current stream
 * before and after fn, the second waited for after each run). Times are in
 * milliseconds; `toString()` gives one readable line like
 * `cupyx.profiler.benchmark`.
 *
 * `fn` must be synchronous: a returned Promise is a TypeError. What it
 * returns is otherwise ignored: dispose the tensors it makes inside it (or
 * wrap its body in gx.tidy) so that many runs do not pile up memory. GPU work
 * that `fn` queues on streams other than the current one is not in the GPU
 * time unless `fn` joins them back (stream.waitStream).
 * @example
 * const a = gx.ones([1 << 20], { device: 'cuda' });
 * const r = gx.benchmark(() => { a.add(a).dispose(); }, { name: 'add', nRepeat: 1000 });
 * console.log(r.toString());
 * // add                 :    CPU:    12.345 us   +/-  1.234 (min:    11.000 / median:    12.100 / max:    20.000) us     GPU-0:    15.678 us ...
 * r.gpu?.median; // ms
 */
export function benchmark(fn: () => unknown, opts: BenchmarkOptions = {}): BenchmarkResult {
  if (typeof fn !== 'function') throw new TypeError(`${FN}: argument 'fn' must be a function`);
  if (typeof opts !== 'object' || opts === null) throw new TypeError(`${FN}: argument 'opts' must be an object`);
  checkKeys(opts, FN, OPTION_KEYS);
  const nWarmup = intOption(opts.nWarmup, 'nWarmup', 10, 0);
  const nRepeat = intOption(opts.nRepeat, 'nRepeat', 100, 1);
  const maxDuration = opts.maxDuration ?? Infinity;
  if (typeof maxDuration !== 'number' || Number.isNaN(maxDuration) || maxDuration <= 0) {
    throw new RangeError(`${FN}: option 'maxDuration' must be a positive number of seconds, got ${formatValue(opts.maxDuration)}`);
  }
  if (opts.name !== undefined && typeof opts.name !== 'string') {
    throw new RangeError(`${FN}: option 'name' must be a string, got ${formatValue(opts.name)}`);
  }
  const name = opts.name ?? (fn.name !== '' ? fn.name : '(anonymous)');
  let device: Device | undefined;
  if (opts.device !== undefined) {
    const d = parseDevice(opts.device, FN);
    checkDevice(d, FN);
    device = d.type === 'cuda' ? d : undefined;
  } else if (isAvailable()) {
    device = parseDevice('cuda', FN);
  }

  const call = (): void => {
    const r: unknown = fn();
    if (isThenable(r)) {
      // Nobody will see a later rejection: keep it from becoming an unhandled one.
      Promise.resolve(r).catch(() => undefined);
      throw new TypeError(`${FN}: fn must be synchronous (it returned a Promise); time async work by hand`);
    }
  };

  const stream = device === undefined ? undefined : currentStream(device);
  const start = device === undefined ? undefined : new Event({ device, timing: true });
  const end = device === undefined ? undefined : new Event({ device, timing: true });

  for (let i = 0; i < nWarmup; i++) call();
  if (stream !== undefined) stream.synchronize(); // the timed runs start on an idle stream

  const cpuTimes = new Float64Array(nRepeat);
  const gpuTimes = device === undefined ? undefined : new Float64Array(nRepeat);
  const budgetNs = maxDuration * 1e9;
  let durationNs = 0;
  let runs = 0;
  while (runs < nRepeat) {
    start?.record(stream);
    const t0 = process.hrtime.bigint();
    call();
    const t1 = process.hrtime.bigint();
    cpuTimes[runs] = Number(t1 - t0) / 1e6;
    if (start !== undefined && end !== undefined && gpuTimes !== undefined) {
      end.record(stream);
      end.synchronize();
      gpuTimes[runs] = start.elapsedTime(end);
    }
    runs++;
    durationNs += Number(process.hrtime.bigint() - t0);
    if (durationNs > budgetNs) break;
  }
  return new Result(name, device, cpuTimes.slice(0, runs), gpuTimes?.slice(0, runs));
}
