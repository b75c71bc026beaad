// Compiler options of run-time kernels: NVRTC's spellings normalized to one
// token each (what the cache key sees; cache-lookup.ts), and mapped to nvcc's for the nvcc
// backend (-I made absolute, --pre-include and --ptxas-options in nvcc's
// spelling, NVRTC-only options that change nothing dropped, -default-device
// and -dlto refused).
import * as path from 'path';

// Normalizing is the warm lookup's too (NOTE [ Warm lookup ] in cache-lookup.ts): it lives there, with the key.
export { includeDirsOf, normalizeOptions, preIncludesOf } from './cache-lookup';

/** NVRTC options with no nvcc counterpart that only change diagnostics or speed: dropped. */
const NVCC_DROP = [
  /^--?minimal$/, /^--?no-source-include$/, /^--?(builtin-move-forward|builtin-initializer-list)(=.*)?$/,
  /^--?device-int128$/, /^--?(time|optimization-info|opt-info)=/, /^--?fdevice-time-trace(=.*)?$/,
  /^-ewp$/, /^--extensible-whole-program$/, /^--?device-stack-protector(=.*)?$/,
];
/** NVRTC options whose meaning nvcc cannot give. */
const NVCC_UNSUPPORTED = [
  /^-default-device$/, /^--device-as-default-execution-space$/, /^-dlto$/, /^--dlink-time-opt$/,
  /^-pch$/, /^--pch$/, /^--(create|use)-pch=/, /^--pch-dir=/, /^--?gen-opt-lto$/,
];

/** NVRTC options (normalized) as nvcc arguments. */
export function nvccArgsFor(options: string[], cwd: string, what = 'gx.RawKernel'): string[] {
  const out: string[] = [];
  for (const o of options) {
    if (NVCC_DROP.some((re) => re.test(o))) continue;
    if (NVCC_UNSUPPORTED.some((re) => re.test(o))) {
      throw new TypeError(`${what}: option '${o}' needs NVRTC, which could not be loaded here; this compile goes through nvcc`);
    }
    if (o.startsWith('-I')) out.push(`-I${path.resolve(cwd, o.slice(2))}`);
    // nvcc runs in `cwd`, and its preprocessor looks for a pre-include there first, then on the include path.
    else if (o.startsWith('--pre-include=')) out.push('--pre-include', o.slice('--pre-include='.length));
    else if (o.startsWith('--ptxas-options=')) out.push(`-Xptxas=${o.slice('--ptxas-options='.length)}`);
    else out.push(o);
  }
  return out;
}
