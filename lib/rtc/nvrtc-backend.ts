// The NVRTC backend of compile(): the toolkit's include directory NVRTC needs,
// NVRTC named by its file in the cache key (NOTE [ NVRTC identity ]), and the
// compile through the core.
import type { ChosenBackend, BackendCompileIn } from './backend';
import { nvrtcIncludeDirs, nvrtcKeyVersion, type CacheEntry, type NvrtcFile } from './cache-lookup';
import { CompileError } from './errors';
import type { RtcNative } from './rtc-native';

// The toolkit's include directory and NVRTC's file are found on the warm path too (NOTE [ Warm lookup ] in cache-lookup.ts).
export { cudaIncludeDir, locateNvrtcFile, type NvrtcFile } from './cache-lookup';

// NOTE [ NVRTC identity ]
// The key names the compiler. Asking NVRTC its version means loading it
// (a dlopen of a 100 MB library: ~8 ms on the H100 machine), which a cache hit
// should not pay. So when the first candidate the core would load (native
// nvrtcCandidates(), stat'ed by nvrtcFile() in the same call) is a file that
// exists, the key names that file instead: its path, device and inode, size
// and mtime (a new install is a new inode; a realpath would cost the first
// lookup a walk of every link). NVRTC is then loaded only to compile, and a compile checks that
// it loaded that very file (else its result is not stored on disk under the
// file's key). When the first candidate is a bare soname (found by the
// loader's search, which only dlopen can follow), the key uses the loaded
// NVRTC's version, as before.

export const nvrtcBackend = (function nvrtcBackend(native: RtcNative, compiler: string, file?: NvrtcFile): ChosenBackend {
  const includeDirs = nvrtcIncludeDirs();
  return {
    backend: 'nvrtc',
    version: nvrtcKeyVersion(compiler, includeDirs),
    includeDirs,
    keyTrusted: () => file === undefined || native.rtcInfo().nvrtcPath === file.candidate,
    compile: (req) => compileWithNvrtc(native, includeDirs, file, req),
  };
});

// NOTE [ Minimal NVRTC ]
// NVRTC 12.4 added -minimal: it leaves out the texture and surface functions,
// the device runtime's functions (cudaMalloc ...), launches from device code
// and the runtime's types and macros (cudaError_t ...), which NVRTC otherwise
// declares for every program, and a small program then compiles in less time
// (a jit kernel's cold first call is mostly NVRTC's). The jit passes it for
// the sources it generates when they include no header (rawkernel.ts's
// compileOptions); an older NVRTC refuses the option, so it is dropped there.
// The key names the compiler (NOTE [ NVRTC identity ]), so an entry holds what
// that compiler made of the options. nvcc drops it too (compile-options.ts).
const MINIMAL = /^--?minimal$/;

/** Whether NVRTC of this version ('12.8', from rtcInfo) takes -minimal (12.4 and later). */
export function nvrtcTakesMinimal(version: string | null): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return m !== null && (Number(m[1]) > 12 || (Number(m[1]) === 12 && Number(m[2]) >= 4));
}

/** The options without -minimal where the loaded NVRTC predates it (NOTE [ Minimal NVRTC ]). */
function withoutUnsupported(options: readonly string[], native: RtcNative): readonly string[] {
  if (!options.some((o) => MINIMAL.test(o)) || nvrtcTakesMinimal(native.rtcInfo().nvrtc)) return options;
  return options.filter((o) => !MINIMAL.test(o));
}

function compileWithNvrtc(native: RtcNative, includeDirs: string[], file: NvrtcFile | undefined, req: BackendCompileIn): CacheEntry {
  if (file !== undefined) {
    const info = native.rtcInfo();
    if (info.nvrtc === null) {
      throw new Error(`${req.what}: NVRTC (${file.candidate}) could not be loaded: ${info.nvrtcError ?? 'unknown error'}`);
    }
  }
  const options = [...withoutUnsupported(req.options, native), ...includeDirs.map((d) => `-I${d}`)];
  const r = native.nvrtcCompile(req.source, req.name, options, req.nameExpressions, req.arch);
  if (!r.ok) throw new CompileError({ log: r.log, source: req.source, programName: req.name, what: req.what, backend: 'nvrtc' });
  if (!r.image || r.image.byteLength === 0) {
    throw new Error(`${req.what}: NVRTC compiled '${req.name}' but returned no image`);
  }
  for (const e of req.nameExpressions) {
    if (!(e in r.loweredNames)) throw new Error(`${req.what}: NVRTC returned no lowered name for name expression '${e}' of '${req.name}'`);
  }
  return { image: r.image, ptx: r.ptx, loweredNames: r.loweredNames, log: r.log, backend: 'nvrtc' };
}
