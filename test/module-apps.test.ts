// An extension in apps of each module system, as a user makes one: `gpuext
// init .` in a package of "type": "module" and in a CommonJS one, `gpuext
// build`, then the scaffold's main.js (JS) and a TypeScript file (module and
// moduleResolution nodenext, strict) import the generated binding and call
// the op on random inputs, checked against the sum computed here. One build
// per app kind; the CommonJS app then switches to outputFormat "both" (a
// relink, no compile) and imports the .mjs and the .cjs. CPU here: .cu code
// is compiled for one arch without a GPU.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import path from 'path';
import ts from 'typescript';

import * as gx from '../lib';
import { detectToolchain } from '../lib/toolkit/toolchain';
import { gpuext, removeTmpdirsAfter, root, run, workspace, type Run } from './cli-helpers';
import { rng } from './rng';

const HAS_NVCC = detectToolchain().nvcc !== undefined;
const nvccTest = HAS_NVCC ? test : test.skip;
const ARCH = gx.cuda.isAvailable() ? 'native' : 'sm_80';
removeTmpdirsAfter();

function ok(t: ExecutionContext, r: Run, what: string): void {
  t.is(r.code, 0, `${what}:\n${r.stdout}${r.stderr}`);
}

/** Type-checks and emits `files` of `dir` as a user's tsconfig would (nodenext, strict); returns the diagnostics as text. */
function tsc(dir: string, files: string[]): { file: string; code: number; text: string }[] {
  const program = ts.createProgram(files.map((f) => path.join(dir, f)), {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')],
  });
  const emitted = program.emit();
  return [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => ({
    file: d.file ? path.basename(d.file.fileName) : '', code: d.code, text: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}

/** The TypeScript app: reads inputs.json, adds through the binding, prints the sums and the arity errors as JSON. */
function appSource(binding: string): string {
  return `import * as fs from 'fs';
import { tensor, type Tensor } from 'gpuext';
import { addGpu, library } from '${binding}';

const { a, b } = JSON.parse(fs.readFileSync('inputs.json', 'utf8')) as { a: number[]; b: number[] };
const x = tensor(new Float32Array(a));
const y = tensor(new Float32Array(b));
const c: Tensor = addGpu(x, y);
const loose = addGpu as (...args: unknown[]) => unknown;
const message = (f: () => unknown): string => {
  try {
    f();
    return 'no error';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
};
console.log(JSON.stringify({
  sums: [...c.toArraySync()].map(Number), ops: library.ops.map((o) => o.name),
  missing: message(() => loose(x)), extra: message(() => loose(x, y, y)),
}));
`;
}

interface AppOutput {
  sums: number[];
  ops: string[];
  missing: string;
  extra: string;
}

/** Random float32 inputs (never all zeros) in inputs.json, and their float32 sums. */
function writeInputs(dir: string, seed: number): number[] {
  const r = rng(seed);
  const a = Array.from({ length: 257 }, () => Math.fround(r() * 8 - 4));
  const b = Array.from({ length: 257 }, () => Math.fround(r() * 8 - 4));
  fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify({ a, b }));
  return a.map((v, i) => Math.fround(v + b[i]));
}

function checkOutput(t: ExecutionContext, r: Run, expected: number[], what: string): void {
  ok(t, r, what);
  const out = JSON.parse(r.stdout) as AppOutput;
  t.deepEqual(out.sums, expected, `${what}: the sums`);
  t.deepEqual(out.ops, ['add_gpu']);
  t.is(out.missing, "addGpu: missing required argument 'b' (Tensor); schema: add_gpu(Tensor a, Tensor b) -> Tensor", what);
  t.regex(out.extra, /^addGpu: takes 2 arguments but 3 were given/, what);
}

/** An app of `type` with the scaffold built in it; checks the scaffold's main.js runs. */
async function scaffoldedApp(t: ExecutionContext, type: 'module' | 'commonjs', name: string): Promise<string> {
  const app = workspace(type);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type }));
  ok(t, await gpuext(['init', '.', '--name', name], app), 'init');
  const main = fs.readFileSync(path.join(app, 'main.js'), 'utf8');
  if (type === 'module') t.regex(main, new RegExp(`^import \\{ addGpu \\} from '\\./build/${name}\\.js';$`, 'm'));
  else t.regex(main, new RegExp(`^const \\{ addGpu \\} = require\\('\\./build/${name}'\\);$`, 'm'));
  const b = await gpuext(['build', '--arch', ARCH], app);
  ok(t, b, 'build');
  t.regex(b.stdout, new RegExp(`^built build/${name}\\.node \\+ ${name}\\.js/\\.d\\.ts in `));
  const js = fs.readFileSync(path.join(app, 'build', `${name}.js`), 'utf8');
  if (type === 'module') {
    t.regex(js, /^import gpuext from "gpuext";$/m);
    t.regex(js, /^export \{ addGpu \};$/m);
    t.notRegex(js, /require\(/);
  } else {
    t.regex(js, /^exports\.addGpu = addGpu;$/m);
  }
  const start = await run(process.execPath, ['main.js'], app);
  ok(t, start, 'node main.js');
  t.regex(start.stdout, /values: \[ 1\.5, 2\.5, 3\.5, 4\.5, 5\.5, 6\.5 \]/);
  t.regex(start.stdout, /as expected: .*shapes differ: \[2, 3\] vs \[3\]/);
  return app;
}

/** app.ts (and bad.ts, a call with an argument missing) type-checked against the binding, then run. */
async function typescriptApp(t: ExecutionContext, app: string, name: string, seed: number): Promise<void> {
  fs.writeFileSync(path.join(app, 'app.ts'), appSource(`./build/${name}.js`));
  fs.writeFileSync(path.join(app, 'bad.ts'), `import { tensor } from 'gpuext';\nimport { addGpu } from './build/${name}.js';\naddGpu(tensor([1]));\n`);
  const diags = tsc(app, ['app.ts', 'bad.ts']);
  t.deepEqual(diags.map((d) => `${d.file} TS${d.code}`), ['bad.ts TS2554'], JSON.stringify(diags));
  const expected = writeInputs(app, seed);
  checkOutput(t, await run(process.execPath, ['app.js'], app), expected, 'node app.js');
}

nvccTest('an ES module app: init writes an ESM main.js, the build an ES module binding; JS and TypeScript import it', async (t) => {
  const app = await scaffoldedApp(t, 'module', 'esm_ops');
  await typescriptApp(t, app, 'esm_ops', 341);
  t.regex(fs.readFileSync(path.join(app, 'app.js'), 'utf8'), /^import \{ addGpu, library \} from '\.\/build\/esm_ops\.js';$/m, 'emitted as ESM');
});

nvccTest('a CommonJS app: a CommonJS binding; then outputFormat "both" gives .mjs and .cjs, importable side by side', async (t) => {
  const app = await scaffoldedApp(t, 'commonjs', 'cjs_ops');
  await typescriptApp(t, app, 'cjs_ops', 342);
  t.regex(fs.readFileSync(path.join(app, 'app.js'), 'utf8'), /require\("\.\/build\/cjs_ops\.js"\)/, 'emitted as CommonJS');

  const config = path.join(app, 'setup.config.json');
  fs.writeFileSync(config, JSON.stringify({ ...JSON.parse(fs.readFileSync(config, 'utf8')) as object, outputFormat: 'both' }));
  const b = await gpuext(['build', '--arch', ARCH], app);
  ok(t, b, 'build (both)');
  t.regex(b.stdout, /^built build\/cjs_ops\.node \+ cjs_ops\.mjs\/\.d\.mts\/\.cjs\/\.d\.cts in [\d.]+s \(0 compiled, 2 cached\)/);
  t.deepEqual(fs.readdirSync(path.join(app, 'build')).filter((f) => !f.startsWith('.')).sort(),
    ['cjs_ops.cjs', 'cjs_ops.d.cts', 'cjs_ops.d.mts', 'cjs_ops.mjs', 'cjs_ops.node'], 'the single-format .js/.d.ts are gone');

  fs.writeFileSync(path.join(app, 'esm.mts'), `${appSource('./build/cjs_ops.mjs')}
import { createRequire } from 'module';
const cjs = createRequire(import.meta.url)('./build/cjs_ops.cjs') as typeof import('./build/cjs_ops.cjs');
if (cjs.library !== library) throw new Error('the .cjs and .mjs bindings loaded two libraries');
`);
  fs.writeFileSync(path.join(app, 'cjs.cts'), appSource('./build/cjs_ops.cjs'));
  t.deepEqual(tsc(app, ['esm.mts', 'cjs.cts']), []);
  const expected = writeInputs(app, 343);
  checkOutput(t, await run(process.execPath, ['esm.mjs'], app), expected, 'node esm.mjs');
  checkOutput(t, await run(process.execPath, ['cjs.cjs'], app), expected, 'node cjs.cjs');
});

test('every export of gpuext is a named export to ES modules (Node\'s CommonJS export detection sees them all)', async (t) => {
  // gpuext is CommonJS; `import { tensor } from 'gpuext'` works only for the names cjs-module-lexer finds in dist/lib/index.js.
  const app = workspace('names');
  fs.writeFileSync(path.join(app, 'names.mjs'), `import * as esm from 'gpuext';
import { createRequire } from 'module';
const cjs = createRequire(import.meta.url)('gpuext');
console.log(JSON.stringify({ missing: Object.keys(cjs).filter((k) => !(k in esm)), count: Object.keys(cjs).length }));
`);
  const r = await run(process.execPath, ['names.mjs'], app);
  ok(t, r, 'node names.mjs');
  const out = JSON.parse(r.stdout) as { missing: string[]; count: number };
  t.deepEqual(out.missing, []);
  t.is(out.count, Object.keys(gx).length);
});
