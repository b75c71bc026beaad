// Where the CUDA toolkit and the compilers are: scripts/find-cuda.js (shared
// with the core's build), nvcc, the host compiler, and what identifies a
// compiler binary without running it. The run-time compiler (lib/rtc) and the
// build toolkit both use them; the toolkit adds the errors that refuse a build
// (lib/toolkit/toolchain.ts: requireNvcc, requireCxx).
import * as fs from 'fs';
import * as path from 'path';

import { packageRoot } from './paths';

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
