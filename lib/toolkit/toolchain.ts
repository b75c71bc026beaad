// Where things are: the gpuext package root, the CUDA toolkit (through
// scripts/find-cuda.js, shared with the core's build), nvcc, the host
// compiler, and their version strings (cached by the binary's identity, so
// a no-change rebuild runs no compiler at all).
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { ToolchainError } from './errors';

let rootCache: string | undefined;

/** The gpuext package root: the nearest ancestor holding a package.json named "gpuext". */
export function packageRoot(): string {
  if (rootCache !== undefined) return rootCache;
  let dir = __dirname;
  for (;;) {
    const pj = path.join(dir, 'package.json');
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(pj, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && 'name' in parsed && parsed.name === 'gpuext') {
        rootCache = dir;
        return dir;
      }
    } catch {
      // no package.json here (or not JSON): keep walking up
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`gpuext: cannot find the package root (no package.json named "gpuext" above ${__dirname})`);
    dir = up;
  }
}

/** The package's version (package.json), for keys and the init scaffold. */
export function packageVersion(): string {
  const parsed: unknown = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8'));
  if (typeof parsed === 'object' && parsed !== null && 'version' in parsed && typeof parsed.version === 'string') {
    return parsed.version;
  }
  return '0.0.0';
}

/** The directory extensions include from (`#include <gpuext/extension.h>`). */
export function includeDir(): string {
  return path.join(packageRoot(), 'csrc', 'include');
}

/** scripts/find-cuda.js, typed. */
export interface FindCuda {
  cudaHome(): string;
  gencode(spec?: string): string[];
  DEFAULT_ARCHS: string[];
}

function isFindCuda(m: unknown): m is FindCuda {
  return typeof m === 'object' && m !== null && 'cudaHome' in m && typeof m.cudaHome === 'function' &&
    'gencode' in m && typeof m.gencode === 'function' && 'DEFAULT_ARCHS' in m && Array.isArray(m.DEFAULT_ARCHS);
}

let findCudaCache: FindCuda | undefined;

export function findCuda(): FindCuda {
  if (findCudaCache) return findCudaCache;
  const file = path.join(packageRoot(), 'scripts', 'find-cuda.js');
  const m: unknown = require(file);
  if (!isFindCuda(m)) throw new Error(`gpuext: ${file} does not export cudaHome, gencode and DEFAULT_ARCHS`);
  findCudaCache = m;
  return m;
}

/** Searches PATH for an executable (what a shell's `command -v` does), without a shell. */
export function which(cmd: string): string | undefined {
  if (cmd.includes('/')) return isExecutable(cmd) ? path.resolve(cmd) : undefined;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, cmd);
    if (isExecutable(p)) return p;
  }
  return undefined;
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

export interface ToolchainOptions {
  /** nvcc to use (a path); default: GPUEXT_NVCC, else `<CUDA home>/bin/nvcc` as find-cuda.js finds it. */
  nvcc?: string;
  /** Host compiler command; default: $CXX, else g++. */
  cxx?: string;
}

export interface Toolchain {
  /** The CUDA toolkit root ('' when none was found). */
  cudaHome: string;
  /** Absolute path of nvcc, or undefined with `nvccMissing` saying why. */
  nvcc?: string;
  nvccMissing?: string;
  /** The host compiler as an argument prefix (e.g. ['/usr/bin/g++'] or ['/usr/bin/ccache', 'g++']). */
  cxx?: string[];
  cxxMissing?: string;
  /** True when the host compiler came from $CXX or an option (then nvcc gets -ccbin). */
  cxxExplicit: boolean;
}

const NVCC_FIX =
  'Install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads; or `conda install -c nvidia cuda-nvcc`, ' +
  'or your distribution\'s cuda-toolkit package) and put nvcc on PATH, or set CUDA_HOME to the toolkit root ' +
  '(the directory holding bin/nvcc). Extensions whose sources are only .cpp files build without CUDA.';

const CXX_FIX =
  'Install a C++17 compiler (Debian/Ubuntu: `apt install g++`; Fedora: `dnf install gcc-c++`; macOS: `xcode-select --install`) ' +
  'or set CXX to one.';

/** Finds nvcc and the host compiler. Never throws; see requireNvcc / requireCxx. */
export function detectToolchain(opts: ToolchainOptions = {}): Toolchain {
  const tc: Toolchain = { cudaHome: '', cxxExplicit: false };
  const explicitNvcc = opts.nvcc ?? process.env.GPUEXT_NVCC;
  if (explicitNvcc) {
    const p = path.resolve(explicitNvcc);
    if (isExecutable(p)) {
      tc.nvcc = p;
      tc.cudaHome = path.dirname(path.dirname(realpath(p)));
    } else {
      tc.nvccMissing = `nvcc not found at ${p} (given by ${opts.nvcc ? 'the nvcc option' : 'GPUEXT_NVCC'})`;
    }
  } else {
    const home = findCuda().cudaHome();
    if (home) {
      tc.cudaHome = home;
      tc.nvcc = path.join(home, 'bin', 'nvcc');
    } else {
      tc.nvccMissing = process.env.GPUEXT_NO_CUDA === '1'
        ? 'CUDA is disabled (GPUEXT_NO_CUDA=1)'
        : 'nvcc not found (looked at CUDA_HOME, CUDA_PATH, /usr/local/cuda and PATH)';
    }
  }
  const cxxSpec = opts.cxx ?? process.env.CXX;
  tc.cxxExplicit = Boolean(cxxSpec);
  const words = (cxxSpec || 'g++').trim().split(/\s+/);
  const exe = which(words[0]);
  if (exe) tc.cxx = [exe, ...words.slice(1)];
  else tc.cxxMissing = `host C++ compiler '${words[0]}' not found${cxxSpec ? ' (from CXX)' : ' on PATH'}`;
  return tc;
}

/** nvcc, or a ToolchainError that says how to get it. */
export function requireNvcc(tc: Toolchain, cuSources: string[]): string {
  if (tc.nvcc) return tc.nvcc;
  const list = cuSources.slice(0, 3).join(', ') + (cuSources.length > 3 ? ', ...' : '');
  throw new ToolchainError(`gpuext build: ${tc.nvccMissing ?? 'nvcc not found'}, but CUDA sources need it (${list}). ${NVCC_FIX}`, 'nvcc');
}

export function requireCxx(tc: Toolchain): string[] {
  if (tc.cxx) return tc.cxx;
  throw new ToolchainError(`gpuext build: ${tc.cxxMissing ?? 'no host C++ compiler'}. ${CXX_FIX}`, 'cxx');
}

export const FIXES = { nvcc: NVCC_FIX, cxx: CXX_FIX };

export function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * What identifies a compiler binary without running it: its real path,
 * size and mtime. A version cache keyed by this stays right across upgrades.
 */
export function binaryFingerprint(exe: string): string {
  const real = realpath(exe);
  try {
    const st = fs.statSync(real);
    return `${real}:${st.size}:${Math.floor(st.mtimeMs)}`;
  } catch {
    return real;
  }
}

const versionMemo = new Map<string, Promise<string>>();

/**
 * `<compiler> --version`, cached per process and in `persistent` (a map the
 * build keeps in its manifest) under the binary's fingerprint.
 */
export function compilerVersion(argv: string[], persistent?: Record<string, string>): Promise<string> {
  const fp = argv.slice(1).concat(binaryFingerprint(argv[0])).join(' ');
  const stored = persistent?.[fp];
  if (stored !== undefined) return Promise.resolve(stored);
  let p = versionMemo.get(fp);
  if (!p) {
    p = new Promise<string>((resolve) => {
      execFile(argv[0], [...argv.slice(1), '--version'], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
        resolve(err ? `${argv.join(' ')} (version unknown)` : `${stdout}${stderr}`.trim());
      });
    });
    versionMemo.set(fp, p);
  }
  return p.then((v) => {
    if (persistent) persistent[fp] = v;
    return v;
  });
}

/** The directories whose headers are hashed by path only (with the compiler version), not by bytes. */
export function systemIncludePrefixes(tc: Toolchain): string[] {
  const prefixes = ['/usr/include/', '/usr/lib/', '/usr/lib64/', '/usr/local/include/', '/Library/Developer/'];
  if (tc.cudaHome) {
    prefixes.push(path.join(tc.cudaHome, '/'));
    prefixes.push(path.join(realpath(tc.cudaHome), '/'));
  }
  if (tc.cxx) {
    // A compiler outside /usr (conda, a custom prefix) keeps its headers next to it.
    const wrapped = tc.cxx.length > 1 && /^(ccache|sccache|distcc)$/.test(path.basename(tc.cxx[0]));
    const exe = wrapped ? which(tc.cxx[1]) : tc.cxx[0];
    const prefix = exe ? path.dirname(path.dirname(realpath(exe))) : '/';
    if (prefix !== '/' && prefix !== '/usr' && prefix !== '/usr/local' && !prefix.startsWith(os.homedir())) {
      prefixes.push(path.join(prefix, '/'));
    }
  }
  return prefixes;
}

/** GPU models the driver reports (Linux /proc), so `arch: native` objects are keyed by the GPUs they were built for. */
export function nativeGpuModels(): string[] {
  const dir = '/proc/driver/nvidia/gpus';
  try {
    return fs.readdirSync(dir).sort().map((bus) => {
      try {
        const info = fs.readFileSync(path.join(dir, bus, 'information'), 'utf8');
        return /Model:\s*(.*)/.exec(info)?.[1]?.trim() ?? bus;
      } catch {
        return bus;
      }
    });
  } catch {
    return [];
  }
}

/** The per-user cache directory: GPUEXT_CACHE_DIR, else $XDG_CACHE_HOME/gpuext, else ~/.cache/gpuext. */
export function cacheDir(): string {
  if (process.env.GPUEXT_CACHE_DIR) return path.resolve(process.env.GPUEXT_CACHE_DIR);
  if (process.env.XDG_CACHE_HOME) return path.join(path.resolve(process.env.XDG_CACHE_HOME), 'gpuext');
  return path.join(os.homedir(), '.cache', 'gpuext');
}
