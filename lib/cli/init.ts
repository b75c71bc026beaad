// `gpuext init <dir>`: a project that builds and runs as it stands —
// setup.config.json, ops/add.cu (CUDA and CPU implementations), main.js,
// package.json with `build` and `start` scripts — or, in an existing project,
// the same files added beside its package.json with one script more.
import * as fs from 'fs';
import * as path from 'path';

import { jsonErrorPlace } from '../toolkit/config';
import { writeFileAtomic } from '../platform/fs';
import { packageRoot, packageVersion } from '../toolkit/toolchain';
import type { ModuleKind } from '../toolkit/module-format';
import { flag, parseArgs } from './args';
import { defaultOutput, type Output } from './build';

export const INIT_USAGE = `usage: gpuext init <dir> [--name NAME] [--force]

Creates an extension project in <dir> (created when missing):
  setup.config.json   the build description (with a JSON Schema for editors)
  ops/add.cu          an elementwise float32 add, CUDA and CPU implementations
  main.js             calls it on the GPU when there is one, else on the CPU
                      (an ES module in a "type": "module" package)
  package.json        npm run build (gpuext build), npm start

In a directory that already has a package.json (\`gpuext init .\` in your
app), the files are added beside it: package.json only gains a "build" script
(or "build:ops" when "build" is taken), the example is <name>-example.js when
main.js exists, and .gitignore gains build/.

  --name NAME   the extension's name (default: <dir>'s name as an identifier)
  --force       overwrite files that already exist`;

interface PackageJson {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The package.json in `dir`, if there is one; throws when it is not a JSON object. */
function readPackageJson(dir: string): PackageJson | undefined {
  const file = path.join(dir, 'package.json');
  const text = readText(file);
  if (!text) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`gpuext init: ${file}:${jsonErrorPlace(text, e)} is not valid JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`gpuext init: ${file} is not a JSON object`);
  return v as PackageJson;
}

/**
 * The dependency a new project gets on the gpuext that made it. From a
 * checkout, a `file:` path to it. From an installed gpuext, the spec the
 * project that installed it used (a registry range, a tarball, a path), with
 * a relative `file:` path rewritten for the new directory; a bare version
 * range only when no installing project is found.
 */
export function gpuextDependency(dir: string, root: string): string {
  const parts = root.split(path.sep);
  const nm = parts.lastIndexOf('node_modules');
  if (nm < 0) return `file:${slash(path.relative(dir, root)) || '.'}`;
  const installer = parts.slice(0, nm).join(path.sep) || path.sep;
  const pkg = (() => {
    try {
      return readPackageJson(installer);
    } catch {
      return undefined;
    }
  })();
  const spec = pkg?.dependencies?.gpuext ?? pkg?.devDependencies?.gpuext;
  if (spec === undefined) return packageVersion();
  const file = /^file:(.*)$/.exec(spec);
  if (!file || path.isAbsolute(file[1])) return spec;
  return `file:${slash(path.relative(dir, path.resolve(installer, file[1]))) || '.'}`;
}

/** "my-ops" -> "my_ops": a C and JS identifier. */
export function extensionName(dir: string): string {
  let n = path.basename(path.resolve(dir)).replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_]/.test(n)) n = `_${n}`;
  return n || 'ops';
}

function npmName(dir: string): string {
  const n = path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]/g, '-').replace(/^[._]+/, '');
  return n || 'gpuext-ops';
}

/** The gpuext installation `dir` would resolve (nearest node_modules/gpuext upwards), if any. */
function resolvableGpuext(dir: string): string | undefined {
  let d = path.resolve(dir);
  for (;;) {
    const p = path.join(d, 'node_modules', 'gpuext');
    if (fs.existsSync(path.join(p, 'package.json'))) return p;
    const up = path.dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

function slash(p: string): string {
  return p.split(path.sep).join('/');
}

/**
 * ops/add.cu of a new project: the AddGPU example (examples/add-gpu/ops/add.cu,
 * shipped with the package), registered under the project's name.
 */
export function addSource(name: string): string {
  const example = fs.readFileSync(path.join(packageRoot(), 'examples', 'add-gpu', 'ops', 'add.cu'), 'utf8');
  const body = example.replace(/^(\/\/.*\n)+/, '');  // the example's own header comment
  const header = `// ${name}: add_gpu, elementwise c = a + b for float32 tensors of the same shape, with
// a CUDA implementation and a CPU one. Build with \`npm run build\` (gpuext build),
// which also generates build/${name}.js and build/${name}.d.ts with a typed addGpu().
`;
  const renamed = body.replace('GX_LIBRARY(add_gpu, m)', `GX_LIBRARY(${name}, m)`);
  if (renamed === body) throw new Error('gpuext init: the AddGPU example no longer has GX_LIBRARY(add_gpu, m)');
  return header + renamed;
}

/**
 * The example that calls the op: an ES module (import, top-level await) in a
 * package of "type": "module", where the build writes an ES module binding,
 * else CommonJS. Both do the same; the body is shared.
 */
export function mainSource(name: string, kind: ModuleKind = 'cjs'): string {
  const body = `  const device = cuda.isAvailable() ? 'cuda' : 'cpu';
  console.log(\`running on \${device}\${device === 'cpu' ? \` (no GPU: \${cuda.unavailableReason()})\` : ''}\`);

  const a = tensor([[1, 2, 3], [4, 5, 6]], { device });
  const b = full([2, 3], 0.5, { device });
  const c = addGpu(a, b);
  console.log(c.toString());
  console.log('values:', Array.from(await c.toArray()));

  // The op checks its inputs; a bad call throws an error naming it.
  const d = ones([3], { device });
  try {
    addGpu(a, d);
  } catch (err) {
    console.log('as expected:', err.message);
  }
  for (const t of [a, b, c, d]) t.dispose();
`;
  const intro = `// Calls the extension's addGpu() through its generated, typed binding.
// Run \`npm run build\` first (it writes build/${name}.js), then \`npm start\`.
`;
  if (kind === 'esm') {
    return `${intro}import { cuda, full, ones, tensor } from 'gpuext';
import { addGpu } from './build/${name}.js';

${body.replace(/^  /gm, '')}`;
  }
  return `${intro}const { cuda, full, ones, tensor } = require('gpuext');
const { addGpu } = require('./build/${name}');

async function main() {
${body}}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`;
}

export interface InitResult {
  dir: string;
  name: string;
  files: string[];
  /** The commands that build and run the example, in the order to type them. */
  next: string[];
}

/** Writes the scaffold. Throws when a file exists (unless force). */
export function scaffold(dir: string, opts: { name?: string; force?: boolean } = {}): InitResult {
  const abs = path.resolve(dir);
  const name = opts.name ?? extensionName(abs);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`gpuext init: --name '${name}' is not an identifier`);
  const root = packageRoot();
  const installed = resolvableGpuext(abs);
  const schemaFrom = installed ?? root;
  const schema = slash(path.relative(abs, path.join(schemaFrom, 'setup.config.schema.json')));
  const existingPackage = readPackageJson(abs);
  const script = existingPackage ? (existingPackage.scripts?.build === undefined ? 'build' : 'build:ops') : 'build';
  const runner = existingPackage && fs.existsSync(path.join(abs, 'main.js')) ? `${name}-example.js` : 'main.js';
  const files: Record<string, string> = {
    'setup.config.json': `${JSON.stringify({
      $schema: schema.startsWith('.') ? schema : `./${schema}`,
      name,
      sources: ['ops/**/*.{cu,cpp}'],
      outDir: 'build',
      arch: 'native',
    }, null, 2)}\n`,
    [path.join('ops', 'add.cu')]: addSource(name),
    [runner]: mainSource(name, existingPackage?.type === 'module' ? 'esm' : 'cjs'),
  };
  if (existingPackage) {
    // An existing project keeps its package.json but for one script, and its .gitignore gains the build folder.
    const scripts = existingPackage.scripts ?? {};
    if (scripts[script] === undefined) {
      files['package.json'] = `${JSON.stringify({ ...existingPackage, scripts: { ...scripts, [script]: 'gpuext build' } }, null, 2)}\n`;
    }
    const ignore = readText(path.join(abs, '.gitignore'));
    const missing = ['build/', 'node_modules/'].filter((l) => !ignore.split(/\r?\n/).includes(l));
    if (missing.length) files['.gitignore'] = `${ignore}${ignore && !ignore.endsWith('\n') ? '\n' : ''}${missing.join('\n')}\n`;
  } else {
    files['package.json'] = `${JSON.stringify({
      name: npmName(abs),
      version: '0.1.0',
      private: true,
      description: `${name}: custom GPU operators built with gpuext`,
      main: `build/${name}.js`,
      types: `build/${name}.d.ts`,
      scripts: { build: 'gpuext build', start: 'node main.js', clean: 'gpuext clean' },
      dependencies: { gpuext: gpuextDependency(abs, root) },
    }, null, 2)}\n`;
    files['.gitignore'] = 'build/\nnode_modules/\n';
  }
  const declared = existingPackage?.dependencies?.gpuext ?? existingPackage?.devDependencies?.gpuext;
  const next = [
    ...(resolvableGpuext(abs) === undefined ? [existingPackage && declared === undefined ? `npm install ${gpuextDependency(abs, root)}` : 'npm install'] : []),
    `npm run ${script}`,
    existingPackage ? `node ${runner}` : 'npm start',
  ];
  const ours = new Set(['package.json', '.gitignore']);  // merged into, never refused, in an existing project
  if (!opts.force) {
    const existing = Object.keys(files).filter((f) => !(existingPackage && ours.has(f)) && fs.existsSync(path.join(abs, f)));
    if (existing.length) {
      throw new Error(`gpuext init: ${path.relative(process.cwd(), abs) || '.'} already has ${existing.join(', ')} (use --force to overwrite)`);
    }
  }
  const written: string[] = [];
  for (const [rel, text] of Object.entries(files)) {
    const p = path.join(abs, rel);
    writeFileAtomic(p, text);
    written.push(p);
  }
  return { dir: abs, name, files: written, next };
}

export async function initCommand(argv: readonly string[], o: Output = defaultOutput()): Promise<number> {
  const args = parseArgs('init', argv, {
    name: { value: true }, force: { value: false, alias: 'f' }, help: { value: false, alias: 'h' },
  });
  if (flag(args, 'help')) {
    o.out(INIT_USAGE);
    return 0;
  }
  if (args.positionals.length !== 1) {
    o.err(`gpuext init: expected one directory\n\n${INIT_USAGE}`);
    return 2;
  }
  const nameOpt = args.options.get('name');
  let r: InitResult;
  try {
    r = scaffold(args.positionals[0], { name: typeof nameOpt === 'string' ? nameOpt : undefined, force: flag(args, 'force') });
  } catch (e) {
    o.err(e instanceof Error ? e.message : String(e));
    return 1;
  }
  const shown = path.relative(process.cwd(), r.dir) || '.';
  o.out(`created ${shown}/ (extension '${r.name}'):`);
  for (const f of r.files) o.out(`  ${path.relative(r.dir, f)}`);
  o.out(`\nnext:\n${[...(shown === '.' ? [] : [`cd ${shown}`]), ...r.next].map((c) => `  ${c}`).join('\n')}`);
  return 0;
}
