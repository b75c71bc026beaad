// Helpers shared by core.bench.ts and extension.bench.ts: timing, medians,
// number formatting, table printing, and reading a Python child's last JSON line.
import { spawnSync, type SpawnSyncReturns } from 'child_process';
import * as path from 'path';

import * as gx from '../lib';

export const MiB = 1 << 20;
export const REPO = path.resolve(__dirname, '..', '..'); // dist/bench -> repository root
export const PYTHON = process.env.GPUEXT_BENCH_PYTHON ?? 'python3';

// ---------------------------------------------------------------- timing

export function nowNs(): bigint {
  return process.hrtime.bigint();
}

export function elapsedNs(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0);
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Side-by-side figures of `fns`: `rounds` rounds, each measuring every
 * function once in a rotated order (so none always runs first, or right
 * after the same other), each function's figure the median over the rounds.
 */
export function rotatedMedians<F>(fns: readonly F[], measure: (f: F) => number, rounds: number): number[] {
  const samples = fns.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < fns.length; j++) {
      const k = (j + r) % fns.length;
      samples[k].push(measure(fns[k]));
    }
  }
  return samples.map(median);
}

/**
 * Median per-call nanoseconds of fn(), timed in batches of `batch` calls.
 * With `warmup`, that many untimed calls come first; with `sync`, it runs after
 * the warmup and closes each timed batch (inside the timed region).
 */
export function perCallNs(
  fn: () => void,
  iters: number,
  batch: number,
  opts: { warmup?: number; sync?: () => void } = {},
): number {
  const { warmup = 0, sync } = opts;
  for (let i = 0; i < warmup; i++) fn();
  sync?.();
  const samples: number[] = [];
  const batches = Math.max(1, Math.floor(iters / batch));
  for (let b = 0; b < batches; b++) {
    const t0 = nowNs();
    for (let i = 0; i < batch; i++) fn();
    sync?.();
    samples.push(elapsedNs(t0) / batch);
  }
  return median(samples);
}

// ---------------------------------------------------------------- printing

export function fmt(x: number | undefined, digits?: number): string {
  if (x === undefined || !Number.isFinite(x)) return 'n/a';
  if (digits !== undefined) return x.toFixed(digits);
  const a = Math.abs(x);
  return x.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
  return `${(a / b).toFixed(2)}x`;
}

/** Columns padded to their widest cell; the first (and `leftLast`: the last) left-aligned, the rest right-aligned. */
export function printTable(head: readonly string[], rows: readonly (readonly string[])[], leftLast = false): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number): boolean => i === 0 || (leftLast && i === head.length - 1);
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  console.log(`  ${line(head)}`);
  console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const r of rows) console.log(`  ${line(r)}`);
}

export function section(title: string): void {
  console.log(`\n== ${title}`);
}

export function progress(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

/** The opening lines: title, node and platform, the GPU (or `noGpuLine`, where given, without one), how figures are taken. */
export function printHeader(title: string, cuda: boolean, noGpuLine?: string): void {
  console.log(title);
  console.log(`  node ${process.version}, ${process.platform}/${process.arch}`);
  if (cuda) {
    const p = gx.cuda.getDeviceProperties();
    console.log(`  GPU: ${p.name} (sm_${p.major}${p.minor}, ${p.multiProcessorCount} SMs, ${fmt(p.totalMemory / 2 ** 30, 1)} GiB)`);
  } else if (noGpuLine !== undefined) {
    console.log(noGpuLine);
  }
  console.log('  medians throughout; GB/s = 1e9 bytes/s; GPU work synchronized inside each timed region');
}

// ---------------------------------------------------------------- a child's JSON result

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function numField(o: Record<string, unknown> | undefined, key: string): number | undefined {
  const v = o?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** o[key] when it is a non-empty array of finite numbers. */
export function numArrayField(o: Record<string, unknown> | undefined, key: string): number[] | undefined {
  const v = o?.[key];
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const out: number[] = [];
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
    out.push(x);
  }
  return out;
}

export function strField(o: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = o?.[key];
  return typeof v === 'string' ? v : undefined;
}

export function recField(o: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const v = o?.[key];
  return isRecord(v) ? v : undefined;
}

/** The last non-empty stdout line parsed as a JSON object, or undefined. */
export function lastJsonLine(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(last);
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The last non-empty line of a text, shortened to its last `n` characters. */
export function tail(text: string | undefined, n = 300): string {
  const t = (text ?? '').trim();
  const lastLine = t.split('\n').filter((l) => l.trim().length > 0).pop() ?? '';
  return lastLine.length > n ? `...${lastLine.slice(-n)}` : lastLine;
}

export function childFailure(r: SpawnSyncReturns<string>, what: string): string {
  if (r.error !== undefined) {
    const code = (r.error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${what}: command not found`;
    if (code === 'ETIMEDOUT') return `${what}: timed out`;
    return `${what}: ${r.error.message}`;
  }
  if (r.signal !== null) return `${what}: killed by ${r.signal}`;
  return `${what}: exit ${String(r.status)}: ${tail(r.stderr) || tail(r.stdout) || 'no output'}`;
}

// ---------------------------------------------------------------- gpuext

export function liveTensors(device: 'cpu' | 'cuda'): number {
  return gx.memory.stats(device).liveTensors;
}

export interface LiveCounts {
  cpu: number;
  cuda: number; // 0 without CUDA
}

export function liveCounts(cuda: boolean): LiveCounts {
  return { cpu: liveTensors('cpu'), cuda: cuda ? liveTensors('cuda') : 0 };
}

/** The live counts now. Everything the bench created was disposed, so a count off `live0` adds a warning. */
export function checkLive(live0: LiveCounts, cuda: boolean, warnings: string[]): LiveCounts {
  const live1 = liveCounts(cuda);
  if (live1.cpu !== live0.cpu || live1.cuda !== live0.cuda) {
    warnings.push(`live tensors: cpu ${live0.cpu} -> ${live1.cpu}, cuda ${live0.cuda} -> ${live1.cuda}`);
  }
  return live1;
}

/** The WARNINGS and PROBLEMS blocks, each only when not empty; any problem sets exit status 1. */
/** Runs a bench's main (sync or async): a throw is printed with its stack and sets exit status 1. */
export function runMain(main: () => void | Promise<void>): void {
  const fail = (err: unknown): void => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  };
  try {
    const r = main();
    if (r instanceof Promise) r.catch(fail);
  } catch (err: unknown) {
    fail(err);
  }
}

export function printIssues(warnings: readonly string[], problems: readonly string[]): void {
  if (warnings.length > 0) {
    console.log('\nWARNINGS:');
    for (const w of warnings) console.log(`  ${w}`);
  }
  if (problems.length > 0) {
    console.log('\nPROBLEMS:');
    for (const p of problems) console.log(`  ${p}`);
    process.exitCode = 1;
  }
}

/**
 * Runs a python bench script (its progress goes to our stderr) and returns its
 * last stdout line parsed as JSON, or why there is none: the script failed to
 * start, printed no JSON, reported {"error": ...}, or exited non-zero.
 */
export function runPythonJson(script: string, args: readonly string[], timeoutMs: number):
  { ok: true; o: Record<string, unknown> } | { ok: false; error: string } {
  const r = spawnSync(PYTHON, [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: timeoutMs,
    maxBuffer: 16 * MiB,
    cwd: REPO,
  });
  const what = `${PYTHON} ${script}`;
  if (r.error !== undefined) return { ok: false, error: childFailure(r, what) };
  const o = lastJsonLine(r.stdout ?? '');
  if (o === undefined) return { ok: false, error: childFailure(r, what) };
  const err = strField(o, 'error');
  if (err !== undefined) return { ok: false, error: err };
  if (r.status !== 0) return { ok: false, error: childFailure(r, what) };
  return { ok: true, o };
}

/** Input patterns of the bandwidth benches: exact in float32, so a + b is exact too. */
export const patternA = (i: number): number => (i % 1021) * 0.5;
export const patternB = (i: number): number => (i % 13) - 6.25;

/** Two CUDA float32 tensors of n elements holding patternA and patternB (one host buffer reused). */
export function bigInputs(n: number): [gx.Tensor, gx.Tensor] {
  const host = new Float32Array(n);
  for (let i = 0; i < n; i++) host[i] = patternA(i);
  const a = gx.tensor(host, { device: 'cuda' });
  try {
    for (let i = 0; i < n; i++) host[i] = patternB(i);
    return [a, gx.tensor(host, { device: 'cuda' })];
  } catch (err) {
    a.dispose();
    throw err;
  }
}

// ---------------------------------------------------------------- the launch floor (C++, no JS)

export interface LaunchFloor {
  /** <<<>>>, us per launch. */
  runtimeUs?: number;
  /** cuLaunchKernel, us per launch. */
  driverUs?: number;
  /** Why there is no figure. */
  note?: string;
}

/**
 * bench/`name`.cu built with the toolkit's nvcc (into `dir`) and run: the
 * JSON object it prints last, or why there is none.
 */
export function cudaFloor(nvcc: string | undefined, dir: string, name: string, libs: readonly string[] = []): { o?: Record<string, unknown>; note?: string } {
  if (nvcc === undefined) return { note: 'n/a (no nvcc)' };
  progress(`${name}: building bench/${name}.cu`);
  const exe = path.join(dir, name);
  const build = spawnSync(nvcc, ['-O2', '-o', exe, path.join(REPO, 'bench', `${name}.cu`), ...libs], { encoding: 'utf8', timeout: 120_000 });
  if (build.status !== 0) return { note: `n/a (build failed: ${tail(build.stderr, 120)})` };
  const run = spawnSync(exe, [], { encoding: 'utf8', timeout: 120_000 });
  const o = lastJsonLine(run.stdout ?? '');
  return o === undefined || o.error !== undefined ? { note: `n/a (${tail(run.stdout || run.stderr, 120)})` } : { o };
}

/**
 * bench/launch_floor.cu built and run: an empty 4-argument kernel launched
 * from C++ in batches of 1000 closed by a synchronize, as the call-latency
 * benchmarks time their calls. What no JS binding can beat on this machine,
 * this run.
 */
export function launchFloor(nvcc: string | undefined, dir: string): LaunchFloor {
  const { o, note } = cudaFloor(nvcc, dir, 'launch_floor', ['-lcuda']);
  return o === undefined || numField(o, 'driverUs') === undefined
    ? { note: note ?? 'n/a (no driverUs in its output)' }
    : { runtimeUs: numField(o, 'runtimeUs'), driverUs: numField(o, 'driverUs') };
}
