// Compiler options of run-time kernels: NVRTC's spellings normalized to one
// token each (what the cache key sees), and mapped to nvcc's for the nvcc
// backend (-I made absolute, --pre-include and --ptxas-options in nvcc's
// spelling, NVRTC-only options that change nothing dropped, -default-device
// and -dlto refused).
import * as path from 'path';

/** Options that take a value, in their spellings; the canonical form is `<canon><value>`. */
const VALUED: { names: string[]; canon: string }[] = [
  { names: ['-I', '--include-path'], canon: '-I' },
  { names: ['-D', '--define-macro'], canon: '-D' },
  { names: ['-U', '--undefine-macro'], canon: '-U' },
  { names: ['-include', '--pre-include'], canon: '--pre-include=' },
  { names: ['-Xptxas', '--ptxas-options'], canon: '--ptxas-options=' },
];

/**
 * Options in one token each, order kept: `-I dir`, `['-I', 'dir']`,
 * `--include-path=dir` all become `-Idir` (likewise -D, -U, --pre-include=,
 * --ptxas-options=). The arch is not an option (it is `arch`).
 */
export function normalizeOptions(options: readonly string[], what = 'gx.RawKernel'): string[] {
  const out: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const raw = options[i];
    if (typeof raw !== 'string') throw new TypeError(`${what}: options must be strings; option ${i} is ${typeof raw}`);
    const opt = raw.trim();
    if (opt === '') continue;
    if (/^(-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)([= ]|$)/.test(opt)) {
      throw new TypeError(`${what}: '${opt}': give the arch as the arch option (e.g. arch: 'sm_90'), not in options`);
    }
    let matched = false;
    for (const v of VALUED) {
      for (const name of v.names) {
        let value: string | undefined;
        if (opt === name) {
          const next = options[i + 1];
          if (typeof next !== 'string' || next.trim() === '') throw new TypeError(`${what}: option '${name}' needs a value`);
          value = next.trim();
          i++;
        } else if (opt.startsWith(`${name}=`)) {
          value = opt.slice(name.length + 1);
        } else if (opt.startsWith(`${name} `)) {
          value = opt.slice(name.length + 1).trim();
        } else if ((name === '-I' || name === '-D' || name === '-U') && opt.startsWith(name)) {
          value = opt.slice(name.length);
        }
        if (value !== undefined) {
          out.push(`${v.canon}${value}`);
          matched = true;
          break;
        }
      }
      if (matched) break;
    }
    if (!matched) out.push(opt);
  }
  return out;
}

export function includeDirsOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('-I')).map((o) => o.slice(2));
}

export function preIncludesOf(options: readonly string[]): string[] {
  return options.filter((o) => o.startsWith('--pre-include=')).map((o) => o.slice('--pre-include='.length));
}

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
