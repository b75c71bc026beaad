// `gpuext doctor`: what building and running extensions needs, and for each
// missing piece the fix. Exits 1 only when something needed to build is
// missing (the host compiler, the headers, the core; nvcc when the project
// in the current directory has .cu sources).
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { DEFAULT_CONFIG_FILE, loadConfig } from '../toolkit/config';
import { glob } from '../toolkit/glob';
import { cacheDir, detectToolchain, FIXES, includeDir, packageRoot, packageVersion } from '../toolkit/toolchain';
import { flag, parseArgs } from './args';
import { defaultOutput, type Output } from './build';

export const DOCTOR_USAGE = `usage: gpuext doctor

Checks nvcc and its version, the host C++ compiler, the NVIDIA driver and
GPUs (and whether nvcc can target them), the gpuext core and headers, Node
headers, and write access to the cache; prints the fix for each missing piece.`;

type Level = 'ok' | 'warn' | 'fail';

interface Check {
  level: Level;
  what: string;
  detail: string;
  fix?: string;
}

function run(argv: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      resolve(err ? undefined : `${stdout}${stderr}`);
    });
  });
}

function firstLine(s: string | undefined): string {
  return (s ?? '').split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
}

/** Whether the project in the current directory has CUDA sources (then nvcc is needed). */
function projectNeedsNvcc(): boolean | undefined {
  if (!fs.existsSync(DEFAULT_CONFIG_FILE)) return undefined;
  try {
    const cfg = loadConfig(DEFAULT_CONFIG_FILE);
    return glob(cfg.sources, cfg.baseDir, { ignoreDirs: [cfg.outDir] }).some((f) => f.endsWith('.cu'));
  } catch {
    return undefined;
  }
}

function nodeHeaders(): { dir?: string; looked: string[] } {
  const looked: string[] = [];
  const candidates: string[] = [];
  if (process.env.npm_config_nodedir) candidates.push(path.join(process.env.npm_config_nodedir, 'include', 'node'));
  candidates.push(path.resolve(path.dirname(process.execPath), '..', 'include', 'node'));
  const home = process.env.HOME ?? '';
  const version = process.versions.node;
  candidates.push(path.join(home, '.cache', 'node-gyp', version, 'include', 'node'));
  candidates.push(path.join(home, '.node-gyp', version, 'include', 'node'));
  for (const c of candidates) {
    looked.push(c);
    if (fs.existsSync(path.join(c, 'node_api.h'))) return { dir: c, looked };
  }
  return { looked };
}

function driverVersion(): string | undefined {
  try {
    const v = fs.readFileSync('/proc/driver/nvidia/version', 'utf8');
    return /Kernel Module\s+(?:for\s+\S+\s+)?([\d.]+)/.exec(v)?.[1] ?? firstLine(v);
  } catch {
    return undefined;
  }
}

/** What to do about no GPU, by the reason: no driver, an old driver, no device, or a core built without CUDA. */
function noGpuFix(cudaCompiled: boolean, reason: string): string {
  if (!cudaCompiled) return 'rebuild the core with a CUDA toolkit present: `npm rebuild gpuext --build-from-source` (CUDA_HOME=/path/to/cuda)';
  if (/no NVIDIA driver/.test(reason)) {
    return 'on a machine with an NVIDIA GPU, install the driver (https://www.nvidia.com/drivers) and check `nvidia-smi`; ' +
      'without one, everything runs on the CPU';
  }
  if (/update the driver/.test(reason)) return 'install a newer NVIDIA driver (https://www.nvidia.com/drivers), then check `nvidia-smi`';
  return 'check `nvidia-smi` lists a GPU, and that CUDA_VISIBLE_DEVICES (if set) names it';
}

export async function doctorChecks(): Promise<Check[]> {
  const checks: Check[] = [];
  const root = packageRoot();
  checks.push({ level: 'ok', what: 'gpuext', detail: `${packageVersion()} at ${root}` });

  const headers = path.join(includeDir(), 'gpuext', 'extension.h');
  checks.push(fs.existsSync(headers)
    ? { level: 'ok', what: 'headers', detail: includeDir() }
    : { level: 'fail', what: 'headers', detail: `${headers} is missing`, fix: 'reinstall gpuext (npm install gpuext)' });

  const archList = await toolchainChecks(checks);
  coreChecks(checks, archList);

  const nh = nodeHeaders();
  checks.push(nh.dir
    ? { level: 'ok', what: 'Node headers', detail: nh.dir }
    : {
      level: 'warn', what: 'Node headers', detail: `not found (looked in ${nh.looked.join(', ')}); only rebuilding the core needs them`,
      fix: '`npx node-gyp install` downloads them (or set npm_config_nodedir)',
    });
  checks.push(cacheCheck());
  return checks;
}

/** nvcc and the host compiler, run for their versions; returns the archs nvcc can target (its --list-gpu-arch). */
async function toolchainChecks(checks: Check[]): Promise<string | undefined> {
  const tc = detectToolchain();
  const needNvcc = projectNeedsNvcc();
  const [nvccVersion, cxxVersion, archList] = await Promise.all([
    tc.nvcc ? run([tc.nvcc, '--version']) : Promise.resolve(undefined),
    tc.cxx ? run([...tc.cxx, '--version']) : Promise.resolve(undefined),
    tc.nvcc ? run([tc.nvcc, '--list-gpu-arch']) : Promise.resolve(undefined),
  ]);
  if (tc.nvcc && nvccVersion !== undefined) {
    const rel = /release ([\d.]+), (V[\d.]+)/.exec(nvccVersion);
    checks.push({ level: 'ok', what: 'nvcc', detail: `${tc.nvcc} (${rel ? `CUDA ${rel[1]}, ${rel[2]}` : firstLine(nvccVersion)})` });
  } else {
    const why = tc.nvcc ? `${tc.nvcc} does not run` : (tc.nvccMissing ?? 'not found');
    checks.push({
      level: needNvcc ? 'fail' : 'warn', what: 'nvcc',
      detail: `${why}${needNvcc ? '; this project has .cu sources' : ' (needed for .cu sources only)'}`, fix: FIXES.nvcc,
    });
  }
  if (tc.cxx && cxxVersion !== undefined) {
    checks.push({ level: 'ok', what: 'host compiler', detail: `${tc.cxx.join(' ')} (${firstLine(cxxVersion)})` });
  } else {
    checks.push({ level: 'fail', what: 'host compiler', detail: tc.cxxMissing ?? `${tc.cxx?.join(' ')} does not run`, fix: FIXES.cxx });
  }
  return archList;
}

type Core = typeof import('../index');

/** The core: the build describes each extension through it; GPUs and the CPU BLAS are seen through it. */
function coreChecks(checks: Check[], archList: string | undefined): void {
  let core: Core | undefined;
  try {
    core = require('../index');
  } catch (e) {
    checks.push({
      level: 'fail', what: 'core', detail: firstLine(e instanceof Error ? e.message : String(e)),
      fix: 'build it: `npm rebuild gpuext` (in a gpuext checkout: `npm run build`)',
    });
  }
  if (!core) return;
  const { native }: typeof import('../core/native') = require('../core/native');
  checks.push({
    level: 'ok', what: 'core',
    detail: `${native.cudaCompiled ? 'built with CUDA' : 'CPU-only build'}, C ABI ${native.abiVersion.join('.')}`,
  });
  gpuChecks(checks, core, native.cudaCompiled, archList);
  checks.push(blasCheck(core));
}

/** Each GPU, and whether this nvcc can target it; or why there is none. */
function gpuChecks(checks: Check[], core: Core, cudaCompiled: boolean, archList: string | undefined): void {
  const driver = driverVersion();
  const n = core.cuda.deviceCount();
  if (n === 0) {
    checks.push({
      level: 'warn', what: 'GPUs', detail: `none (${core.cuda.unavailableReason()}); ops run on the CPU`,
      fix: noGpuFix(cudaCompiled, core.cuda.unavailableReason()),
    });
    return;
  }
  const supported = new Set((archList ?? '').split(/\s+/).filter(Boolean));
  for (let i = 0; i < n; i++) {
    const p = core.cuda.getDeviceProperties(`cuda:${i}`);
    const arch = `${p.major}${p.minor}`;
    const targetable = supported.size === 0 || supported.has(`compute_${arch}`);
    checks.push({
      level: targetable ? 'ok' : 'warn', what: `cuda:${i}`,
      detail: `${p.name}, sm_${arch}, ${(p.totalMemory / 2 ** 30).toFixed(0)} GiB${driver ? `, driver ${driver}` : ''}` +
        (targetable ? '' : ` — this nvcc cannot target sm_${arch}`),
      fix: targetable ? undefined : 'install a CUDA toolkit that supports this GPU, or build with an older --arch and let the driver JIT the PTX',
    });
  }
}

/** The CPU matmul and SVD: a system BLAS / LAPACK when one loads, else gpuext's own kernels (ops/linalg/blas.h). */
function blasCheck(core: Core): Check {
  try {
    const b = core.backends().cpu;
    const builtin = b.blas.startsWith('built-in');
    return {
      level: builtin ? 'warn' : 'ok', what: 'CPU BLAS',
      detail: `matmul: ${b.blas}${builtin ? `, micro-kernel ${b.gemmKernel}` : ''}; SVD: ${b.lapack}`,
      fix: builtin ? 'optional: a system OpenBLAS makes CPU matmul and SVD faster (Debian/Ubuntu: apt-get install ' +
        'libopenblas0; Fedora: dnf install openblas), or name a BLAS library in GPUEXT_BLAS' : undefined,
    };
  } catch (e) {
    return { level: 'warn', what: 'CPU BLAS', detail: firstLine(e instanceof Error ? e.message : String(e)) };
  }
}

/** Whether the cache directory (gx.load, run-time kernels) can be written. */
function cacheCheck(): Check {
  const cache = cacheDir();
  try {
    fs.mkdirSync(cache, { recursive: true });
    const probe = path.join(cache, `.doctor-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
    return { level: 'ok', what: 'cache', detail: `${cache} is writable` };
  } catch (e) {
    return {
      level: 'warn', what: 'cache', detail: `${cache} is not writable (${e instanceof Error ? e.message : String(e)}); gx.load and run-time kernels need it`,
      fix: 'set GPUEXT_CACHE_DIR to a writable directory',
    };
  }
}

const MARK: Record<Level, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

export async function doctorCommand(argv: readonly string[], o: Output = defaultOutput()): Promise<number> {
  const args = parseArgs('doctor', argv, { help: { value: false, alias: 'h' } });
  if (flag(args, 'help')) {
    o.out(DOCTOR_USAGE);
    return 0;
  }
  const checks = await doctorChecks();
  const width = Math.max(...checks.map((c) => c.what.length));
  for (const c of checks) {
    o.out(`${MARK[c.level]}  ${c.what.padEnd(width)}  ${c.detail}`);
    if (c.fix) o.out(`${' '.repeat(8 + width)}fix: ${c.fix}`);
  }
  const failed = checks.filter((c) => c.level === 'fail');
  o.out(failed.length
    ? `\n${failed.length} problem${failed.length === 1 ? '' : 's'} stop${failed.length === 1 ? 's' : ''} builds: ${failed.map((c) => c.what).join(', ')}`
    : '\nready to build extensions');
  return failed.length ? 1 : 0;
}
