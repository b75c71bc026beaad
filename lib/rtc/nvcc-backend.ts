// The nvcc backend of compile(), for machines without NVRTC (CI): nvcc found
// once per process, its version memoized in the cache directory by the
// binary's identity (path, size, mtime) so a process that hits the disk cache
// runs no compiler at all; the source compiled in a temporary directory; and
// name expressions recovered from what nvcc built (PTX initializers, cubin
// relocations: the same symbols NVRTC's nvrtcGetLoweredName gives).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { rmQuiet, writeFileAtomic } from '../platform/fs';
import { binaryFingerprint, detectToolchain, type Toolchain } from '../platform/cuda';
import type { ChosenBackend, BackendCompileIn } from './backend';
import { VERSIONS_FILE, type CacheEntry } from './cache';
import { nvccArgsFor } from './compile-options';
import { CompileError } from './errors';
import { isStringRecord } from './rtc-native';
import { lazyModule } from '../platform/lazy';

// child_process loads with nvcc's first run, not with a warm cache hit (NOTE [ Lazy entry ] in lib/README.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const childProcess = lazyModule(() => require('child_process') as typeof import('child_process'));

let toolchainMemo: Toolchain | undefined;

export function toolchain(): Toolchain {
  if (!toolchainMemo) toolchainMemo = detectToolchain();
  return toolchainMemo;
}

const nvccVersionMemo = new Map<string, string>();

function nvccVersion(nvcc: string, dir: string): string {
  const fp = binaryFingerprint(nvcc);
  const memo = nvccVersionMemo.get(fp);
  if (memo !== undefined) return memo;
  const file = path.join(dir, VERSIONS_FILE);
  let stored: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (isStringRecord(parsed)) stored = parsed;
  } catch {
    // none yet
  }
  let v = stored[fp];
  if (v === undefined) {
    const r = childProcess().spawnSync(nvcc, ['--version'], { encoding: 'utf8', timeout: 60_000 });
    v = r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : `${nvcc} (version unknown)`;
    if (r.status === 0) {
      try {
        writeFileAtomic(file, `${JSON.stringify({ ...stored, [fp]: v }, null, 1)}\n`);
      } catch {
        // a read-only cache: the version is memoized in this process only
      }
    }
  }
  nvccVersionMemo.set(fp, v);
  return v;
}

export function nvccBackend(nvcc: string, tc: Toolchain, cacheDirForVersions: string): ChosenBackend {
  const ccbin = tc.cxxExplicit && tc.cxx && tc.cxx.length === 1 ? ['-ccbin', tc.cxx[0]] : [];
  return {
    backend: 'nvcc',
    version: `nvcc ${nvccVersion(nvcc, cacheDirForVersions)}\n${ccbin.join(' ')}`,
    includeDirs: [],
    compile(req): CacheEntry {
      return compileWithNvcc(nvcc, ccbin, req);
    },
  };
}

/** A file name for the program name: its base name with unsafe characters replaced, ending in .cu. */
function sourceFileName(name: string): string {
  let base = path.basename(name).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  if (base === '') base = 'kernel';
  if (!/\.cu$/.test(base)) base += '.cu';
  return base;
}

const NAME_EXPR_VAR = '__gx_name_expr_';

function compileWithNvcc(nvcc: string, ccbin: string[], req: BackendCompileIn): CacheEntry {
  const ptx = req.arch.startsWith('compute_');
  const mapped = nvccArgsFor(req.options, req.cwd, req.what);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-rtc-'));
  try {
    const file = path.join(tmp, sourceFileName(req.name));
    const out = path.join(tmp, ptx ? 'out.ptx' : 'out.cubin');
    let text = req.source;
    const appended = new Map<number, string>();
    if (req.nameExpressions.length > 0) {
      if (!text.endsWith('\n')) text += '\n';
      let line = text.split('\n').length;
      req.nameExpressions.forEach((e, i) => {
        const addr = e.trim().startsWith('&') ? e : `&${e}`;
        text += `__device__ void* ${NAME_EXPR_VAR}${i} = (void*)${addr};\n`;
        appended.set(line++, `name expression '${e}'`);
      });
    }
    fs.writeFileSync(file, text);
    // NVRTC looks for the main source's quoted includes in the working directory.
    const iquote = req.cwd.includes(',') ? [] : ['-Xcompiler', '-iquote', '-Xcompiler', req.cwd];
    const args = [ptx ? '-ptx' : '-cubin', `-arch=${req.arch}`, '-o', out, ...ccbin, ...mapped, ...iquote, file];
    const r = childProcess().spawnSync(nvcc, args, { cwd: req.cwd, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
    if (r.error) throw new Error(`${req.what}: could not run nvcc (${nvcc}): ${r.error.message}`);
    const log = `${r.stdout}${r.stderr}`.split(file).join(req.name).split(`${tmp}${path.sep}`).join('').trim();
    if (r.status !== 0) {
      throw new CompileError({ log: log || `nvcc exited with status ${r.status ?? r.signal}`, source: req.source, programName: req.name, what: req.what, backend: 'nvcc', appended });
    }
    let image: Uint8Array = fs.readFileSync(out);
    if (ptx) {
      const withNul = new Uint8Array(image.byteLength + 1);
      withNul.set(image);
      image = withNul;
    }
    const loweredNames: Record<string, string> = {};
    if (req.nameExpressions.length > 0) {
      const found = ptx ? ptxNameExprs(Buffer.from(image).toString('utf8')) : cubinNameExprs(image);
      req.nameExpressions.forEach((e, i) => {
        const sym = found.get(i);
        if (sym === undefined) {
          throw new Error(`${req.what}: could not find the symbol of name expression '${e}' in what nvcc built for '${req.name}' ` +
            '(name expressions through nvcc work for __global__ functions and __device__ variables)');
        }
        loweredNames[e] = sym;
      });
    }
    return { image, ptx, loweredNames, log, backend: 'nvcc' };
  } finally {
    rmQuiet(tmp);
  }
}

/** `__gx_name_expr_<i> = <symbol>;` (or `generic(<symbol>)`) in PTX. */
export function ptxNameExprs(ptx: string): Map<number, string> {
  const out = new Map<number, string>();
  const re = new RegExp(`${NAME_EXPR_VAR}(\\d+)\\s*=\\s*(?:generic\\(\\s*)?([A-Za-z_$%.][A-Za-z0-9_$.]*)`, 'g');
  for (let m = re.exec(ptx); m !== null; m = re.exec(ptx)) out.set(Number(m[1]), m[2]);
  return out;
}

/**
 * In a cubin (ELF64): for each `__gx_name_expr_<i>` variable, the symbol its
 * initializer's relocation points at.
 */
export function cubinNameExprs(image: Uint8Array): Map<number, string> {
  const out = new Map<number, string>();
  const b = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return out; // ELF64 little-endian only
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  interface Section { type: number; offset: number; size: number; link: number; info: number; entsize: number }
  const sections: Section[] = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    if (o + 64 > b.length) return out;
    sections.push({
      type: b.readUInt32LE(o + 4),
      offset: Number(b.readBigUInt64LE(o + 0x18)),
      size: Number(b.readBigUInt64LE(o + 0x20)),
      link: b.readUInt32LE(o + 0x28),
      info: b.readUInt32LE(o + 0x2c),
      entsize: Number(b.readBigUInt64LE(o + 0x38)),
    });
  }
  const symtabIndex = sections.findIndex((s) => s.type === 2);
  if (symtabIndex < 0) return out;
  const symtab = sections[symtabIndex];
  const strtab = sections[symtab.link];
  if (!strtab) return out;
  const cstr = (off: number): string => {
    const start = strtab.offset + off;
    let end = start;
    while (end < b.length && b[end] !== 0) end++;
    return b.toString('latin1', start, end);
  };
  interface Sym { name: string; shndx: number; value: number; size: number }
  const syms: Sym[] = [];
  const ent = symtab.entsize || 24;
  for (let o = symtab.offset; o + ent <= symtab.offset + symtab.size && o + 24 <= b.length; o += ent) {
    syms.push({ name: cstr(b.readUInt32LE(o)), shndx: b.readUInt16LE(o + 6), value: Number(b.readBigUInt64LE(o + 8)), size: Number(b.readBigUInt64LE(o + 16)) });
  }
  const vars = new Map<number, Sym>();
  for (const s of syms) {
    const m = new RegExp(`^${NAME_EXPR_VAR}(\\d+)$`).exec(s.name);
    if (m) vars.set(Number(m[1]), s);
  }
  for (const rela of sections) {
    if (rela.type !== 4 && rela.type !== 9) continue; // SHT_RELA, SHT_REL
    const size = rela.type === 4 ? 24 : 16;
    const step = rela.entsize || size;
    for (let o = rela.offset; o + size <= rela.offset + rela.size && o + size <= b.length; o += step) {
      const off = Number(b.readBigUInt64LE(o));
      const symIdx = Number(b.readBigUInt64LE(o + 8) >> 32n);
      for (const [i, v] of vars) {
        if (out.has(i) || v.shndx !== rela.info || off < v.value || off >= v.value + Math.max(v.size, 1)) continue;
        const target = syms[symIdx];
        if (target && target.name) out.set(i, target.name);
      }
    }
  }
  return out;
}
