// The core's NVRTC binding as compile() uses it: looked up once, when this
// module loads, with what it returns checked (the core addon and lib/ out of
// step give a clear error, not a crash); injectable for tests (RtcNative).
import type { FileStat } from './cache-io';
import type { CompileOptions } from './compiler';

/** What the core's NVRTC binding returns (lib/core/native.ts: native.nvrtcCompile). */
export interface NvrtcOutput {
  ok: boolean;
  log: string;
  image?: Uint8Array;
  ptx: boolean;
  loweredNames: Record<string, string>;
}

/** What the core says about NVRTC and the driver (native.rtcInfo). */
export interface RtcInfo {
  /** NVRTC's version ("12.8"), or null when it cannot be loaded. */
  nvrtc: string | null;
  /** The file NVRTC was loaded from. */
  nvrtcPath?: string;
  nvrtcError?: string;
  driver: boolean;
}

/** The part of the core this module uses (injectable for tests). */
export interface RtcNative {
  rtcInfo(): RtcInfo;
  /** Where the core looks for NVRTC, in order (NOTE [ NVRTC identity ]); absent: always load it to learn its version. */
  nvrtcCandidates?(): string[];
  /** The first candidate that is a file, with its stat; null when a bare soname comes first. */
  nvrtcFile?(): [string, FileStat] | null;
  nvrtcCompile(source: string, programName: string, options: string[], nameExpressions: string[], arch: string): NvrtcOutput;
}


export function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function toRtcInfo(v: unknown): RtcInfo {
  if (typeof v !== 'object' || v === null || !('nvrtc' in v)) {
    return { nvrtc: null, nvrtcError: 'native.rtcInfo() returned something unexpected', driver: false };
  }
  const info: RtcInfo = {
    nvrtc: typeof v.nvrtc === 'string' ? v.nvrtc : null,
    driver: 'driver' in v && v.driver === true,
  };
  if ('nvrtcError' in v && typeof v.nvrtcError === 'string') info.nvrtcError = v.nvrtcError;
  if ('nvrtcPath' in v && typeof v.nvrtcPath === 'string') info.nvrtcPath = v.nvrtcPath;
  return info;
}

function toNvrtcOutput(v: unknown): NvrtcOutput {
  if (typeof v !== 'object' || v === null || !('ok' in v) || typeof v.ok !== 'boolean') {
    throw new Error('gpuext: native.nvrtcCompile returned something unexpected (the core addon and lib/ are out of step; rebuild)');
  }
  const out: NvrtcOutput = {
    ok: v.ok,
    log: 'log' in v && typeof v.log === 'string' ? v.log : '',
    ptx: 'ptx' in v && v.ptx === true,
    loweredNames: 'loweredNames' in v && isStringRecord(v.loweredNames) ? v.loweredNames : {},
  };
  if ('image' in v && v.image instanceof Uint8Array) out.image = v.image;
  return out;
}

// Required when this module loads, not at the first compile: resolving a
// require() costs a first cache lookup more than the lookup (NOTE [ First
// lookup ] in cache-io.ts).
let nativeModule: unknown;
let nativeLoadError = '';
try {
  nativeModule = require('../core/native');
} catch (e) {
  nativeLoadError = `the core addon did not load (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
}

let defaultNative: RtcNative | null | undefined;
let defaultNativeMissing = '';

export const loadDefaultNative = (function loadDefaultNative(): RtcNative | null {
  if (defaultNative !== undefined) return defaultNative;
  defaultNative = null;
  const mod = nativeModule;
  if (mod === undefined) {
    defaultNativeMissing = nativeLoadError;
    return null;
  }
  const n: unknown = typeof mod === 'object' && mod !== null && 'native' in mod ? mod.native : undefined;
  if (typeof n !== 'object' || n === null || !('rtcInfo' in n) || !('nvrtcCompile' in n)) {
    defaultNativeMissing = 'the core addon has no NVRTC binding (rebuild it: npm run build)';
    return null;
  }
  const infoFn = n.rtcInfo;
  const compileFn = n.nvrtcCompile;
  const candidatesFn = 'nvrtcCandidates' in n ? n.nvrtcCandidates : undefined;
  if (typeof infoFn !== 'function' || typeof compileFn !== 'function') {
    defaultNativeMissing = 'the core addon has no NVRTC binding (rebuild it: npm run build)';
    return null;
  }
  let info: RtcInfo | undefined;
  defaultNative = {
    rtcInfo(): RtcInfo {
      if (info) return info;
      try {
        info = toRtcInfo(infoFn.call(n));
      } catch (e) {
        info = { nvrtc: null, nvrtcError: e instanceof Error ? e.message : String(e), driver: false };
      }
      return info;
    },
    nvrtcCompile(source, programName, options, nameExpressions, arch): NvrtcOutput {
      return toNvrtcOutput(compileFn.call(n, source, programName, options, nameExpressions, arch));
    },
  };
  if (typeof candidatesFn === 'function') {
    defaultNative.nvrtcCandidates = (function nvrtcCandidates(): string[] {
      const c: unknown = candidatesFn.call(n);
      if (!Array.isArray(c)) return [];
      for (const x of c) if (typeof x !== 'string') return [];
      return c;
    });
  }
  const fileFn = 'nvrtcFile' in n ? n.nvrtcFile : undefined;
  if (typeof fileFn === 'function') {
    defaultNative.nvrtcFile = (function nvrtcFile(): [string, FileStat] | null {
      const f: unknown = fileFn.call(n);
      if (!Array.isArray(f) || typeof f[0] !== 'string' || !Array.isArray(f[1]) || f[1].length !== 5) return null;
      const st: unknown[] = f[1];
      for (const x of st) if (typeof x !== 'number') return null;
      return [f[0], [Number(st[0]), Number(st[1]), Number(st[2]), Number(st[3]), Number(st[4])]];
    });
  }
  return defaultNative;
});

export function nativeFor(opts: CompileOptions): { native: RtcNative | null; missing: string } {
  if (opts.native !== undefined) return { native: opts.native, missing: opts.native === null ? 'no NVRTC binding was given' : '' };
  const n = loadDefaultNative();
  return { native: n, missing: defaultNativeMissing };
}
