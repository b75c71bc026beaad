// The build's view of the toolchain: the errors that refuse a build without
// nvcc or a host compiler, compiler version strings (cached by the binary's
// identity, so a no-change rebuild runs no compiler at all), the system header
// prefixes and the GPUs present. Finding CUDA and the compilers, the package
// root and the cache directory are lib/platform's (the run-time needs them
// too); they are re-exported here for the toolkit's callers.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { binaryFingerprint, FIXES, realpath, which, type Toolchain } from '../platform/cuda';
import { ToolchainError } from './errors';

export {
  binaryFingerprint, detectToolchain, findCuda, FIXES, realpath, which, type FindCuda, type Toolchain, type ToolchainOptions,
} from '../platform/cuda';
export { cacheDir, includeDir, packageRoot, packageVersion } from '../platform/paths';

/** nvcc, or a ToolchainError that says how to get it. */
export function requireNvcc(tc: Toolchain, cuSources: string[]): string {
  if (tc.nvcc) return tc.nvcc;
  const list = cuSources.slice(0, 3).join(', ') + (cuSources.length > 3 ? ', ...' : '');
  throw new ToolchainError(`gpuext build: ${tc.nvccMissing ?? 'nvcc not found'}, but CUDA sources need it (${list}). ${FIXES.nvcc}`, 'nvcc');
}

export function requireCxx(tc: Toolchain): string[] {
  if (tc.cxx) return tc.cxx;
  throw new ToolchainError(`gpuext build: ${tc.cxxMissing ?? 'no host C++ compiler'}. ${FIXES.cxx}`, 'cxx');
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

