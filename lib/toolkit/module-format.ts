// Which module system the generated binding of an extension speaks: the
// `outputFormat` of setup.config.json, with 'auto' read from the package the
// output directory belongs to (as Node reads a `.js` file there), and the
// files each format writes.
import * as fs from 'fs';
import * as path from 'path';

import { ConfigError } from './errors';

/** What setup.config.json's "outputFormat" may say. */
export const OUTPUT_FORMATS = ['auto', 'esm', 'cjs', 'both'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
/** A module system one binding file is written in. */
export type ModuleKind = 'esm' | 'cjs';

/** One generated binding: the JS file, its declarations, and the module system of both. */
export interface BindingFile {
  kind: ModuleKind;
  js: string;
  dts: string;
}

// NOTE [ Binding file names ]
// Node decides a `.js` file's module system by the nearest package.json's
// "type", TypeScript (module nodenext) does the same for `.d.ts`; `.mjs` /
// `.d.mts` are ESM and `.cjs` / `.d.cts` CommonJS wherever they lie. So one
// format writes `<name>.js` + `<name>.d.ts` in the system its package reads
// them in, and 'both' writes the explicit extensions, which any package can
// import (`import ... from './build/x.mjs'`, `require('./build/x.cjs')`).
const SUFFIXES: Record<'one' | ModuleKind, { js: string; dts: string }> = {
  one: { js: '.js', dts: '.d.ts' },
  esm: { js: '.mjs', dts: '.d.mts' },
  cjs: { js: '.cjs', dts: '.d.cts' },
};

/** Every file name a binding of extension `name` may have, in any format (for clean and stale-file removal). */
export function allBindingNames(name: string): string[] {
  return Object.values(SUFFIXES).flatMap((s) => [`${name}${s.js}`, `${name}${s.dts}`]);
}

/** The nearest package.json's "type" at or above `dir` ('commonjs' when there is none, as Node reads it). */
export function packageType(dir: string): { type: 'module' | 'commonjs'; file?: string } {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const file = path.join(d, 'package.json');
    let text: string | undefined;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      let type: unknown;
      try {
        type = (JSON.parse(text) as { type?: unknown }).type;
      } catch {
        type = undefined;  // Node fails on it too, with its own message; the binding is not the place
      }
      return { type: type === 'module' ? 'module' : 'commonjs', file };
    }
    if (path.dirname(d) === d) return { type: 'commonjs' };
  }
}

/** The module systems to write for `format`, with 'auto' decided by the package that holds `outDir`. */
export function moduleKinds(format: OutputFormat, outDir: string): ModuleKind[] {
  switch (format) {
    case 'esm': return ['esm'];
    case 'cjs': return ['cjs'];
    case 'both': return ['esm', 'cjs'];
    case 'auto': return [packageType(outDir).type === 'module' ? 'esm' : 'cjs'];
  }
}

/** The binding files of extension `name` in `outDir` for `format`. */
export function bindingFiles(outDir: string, name: string, format: OutputFormat): BindingFile[] {
  const kinds = moduleKinds(format, outDir);
  return kinds.map((kind) => {
    const s = kinds.length === 1 ? SUFFIXES.one : SUFFIXES[kind];
    return { kind, js: path.join(outDir, `${name}${s.js}`), dts: path.join(outDir, `${name}${s.dts}`) };
  });
}

function slash(p: string): string {
  return p.split(path.sep).join('/');
}

/**
 * The specifier an ES module in `outDir` imports the runtime by. A package
 * name stays as written (Node resolves it through gpuext's "exports"); a
 * path (relative to outDir, or absolute; what `require` took) is resolved to
 * its file here, since ESM resolves neither directories nor extensionless
 * files. `configFile` names the config in the error.
 */
export function esmRuntimeSpecifier(runtime: string, outDir: string, configFile: string): string {
  const isPath = runtime.startsWith('.') || path.isAbsolute(runtime);
  if (!isPath) return runtime;
  let file: string;
  try {
    file = require.resolve(path.resolve(outDir, runtime));
  } catch {
    throw new ConfigError(`${configFile}: "runtimeImport" ${JSON.stringify(runtime)} resolves to no module from ${outDir}`,
      configFile, 'runtimeImport');
  }
  if (path.isAbsolute(runtime)) return slash(file);
  const rel = slash(path.relative(outDir, file));
  return rel.startsWith('.') ? rel : `./${rel}`;
}
