// gpuext's published types as a new user meets them: small consumer projects
// with nothing but `{ module: nodenext, strict: true }` (no @types/node) are
// compiled against the emitted declarations, as ESM and as CommonJS, by the
// project's TypeScript and by every other TypeScript the machine offers: the
// devDependencies `typescript-6` / `typescript-7` (npm aliases, pinned) when
// installed, and the package directories in GPUEXT_TEST_TYPESCRIPTS (':'-separated).
// A correct program must compile; each wrong one must fail with its error.
import test from 'ava';
import { execFile } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

const root = path.resolve(__dirname, '../..');
const declarations = path.join(root, 'dist/lib');

interface Compiler {
  version: string;
  tsc: string;
}

function compilerAt(dir: string): Compiler | undefined {
  const pkgFile = path.join(dir, 'package.json');
  if (!fs.existsSync(pkgFile)) return undefined;
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { version: string; bin: { tsc: string } };
  return { version: pkg.version, tsc: path.join(dir, pkg.bin.tsc) };
}

function packageDir(name: string): string | undefined {
  try {
    return path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

const compilers: Compiler[] = [];
for (const dir of [packageDir('typescript'), packageDir('typescript-6'), packageDir('typescript-7'),
  ...(process.env.GPUEXT_TEST_TYPESCRIPTS ?? '').split(':').filter((d) => d !== '')]) {
  const c = dir === undefined ? undefined : compilerAt(dir);
  if (c !== undefined && !compilers.some((k) => k.version === c.version)) compilers.push(c);
}
const majors = new Set(compilers.map((c) => c.version.split('.')[0]));

/** The package as installed from npm, declarations only: a copy, so no @types found beside the repository leak in. */
let work: string;
test.before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-types-'));
  const pkg = path.join(work, 'node_modules/gpuext');
  const copy = (from: string, to: string): void => {
    for (const e of fs.readdirSync(from, { withFileTypes: true })) {
      if (e.isDirectory()) copy(path.join(from, e.name), path.join(to, e.name));
      else if (e.name.endsWith('.d.ts')) {
        fs.mkdirSync(to, { recursive: true });
        fs.copyFileSync(path.join(from, e.name), path.join(to, e.name));
      }
    }
  };
  copy(declarations, path.join(pkg, 'dist/lib'));
  const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'gpuext', version: own.version, main: own.main, types: own.types, exports: own.exports }));
});
test.after.always(() => {
  if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
});

/** A consumer project in `work`: tsconfig, package.json (ESM: type module) and the files. */
function project(name: string, esm: boolean, files: Record<string, string>): string {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true, noEmit: true } }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, ...(esm ? { type: 'module' } : {}) }));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

function compile(c: Compiler, dir: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [c.tsc, '-p', dir, '--pretty', 'false'], { cwd: dir, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }));
  });
}

/** Uses the public surface this issue touched: options, item, to, using, typed extension ops. */
const GOOD = `import * as gx from 'gpuext';

export async function main(): Promise<number> {
  using x = gx.ones([2, 3], { dtype: 'float32', device: 'cpu' });
  using s = x.sum({ axis: 1, keepdims: true });
  using s1 = x.sum(1, { keepdims: true });
  const am: gx.Tensor<'int64'> = gx.argmax(x, -1, { keepdims: true });
  const p32: gx.Tensor<'float32'> = gx.softmax(x, { axis: -1 });
  const p64: gx.Tensor<'float64'> = x.logSoftmax(-1, { dtype: 'float64' });
  const c64: gx.Tensor<'int64'> = gx.ones([3], { dtype: 'int32' }).cumsum({ axis: 0 });
  using v = x.var([0, 1], { correction: 0 });
  using cat = gx.cat([x, x], { axis: 1 });
  using sq = x.unsqueeze({ axis: 0 }).squeeze(0);
  const n: number = gx.arange(5).sum().item() + 1;
  const big: bigint = gx.arange(5).sum().itemBigInt();
  const flag: boolean = gx.tensor([true]).item();
  using f = x.to('float64');
  const f64: gx.Tensor<'float64'> = f;
  const h: gx.Tensor<'float16'> = x.to('cuda', 'float16');
  const g: gx.Tensor<'float32'> = x.to('cuda:0', { nonBlocking: true });
  const b: gx.Tensor<'bfloat16'> = x.to({ device: 'cpu', dtype: 'bfloat16' });
  const like: gx.Tensor<'float16'> = x.to(h);
  const ops = await gx.loadInline({
    name: 'my_ops', cuda: '/* kernels */',
    schemas: ['scale(Tensor x, float s=1) -> Tensor', 'topk(Tensor x, int k, *, bool largest=True) -> (Tensor values, Tensor indices)'],
  });
  using y = ops.scale(x, 2);
  const [values, indices]: [gx.Tensor, gx.Tensor] = ops.topk(x, 2, { largest: false });
  interface AddOps { addGpu(a: gx.Tensor, b: gx.Tensor): gx.Tensor }
  const typed = await gx.load<AddOps>({ name: 'add_ops', sources: ['ops/add.cu'] });
  using z = typed.addGpu(x, y);
  const untyped = await gx.load({ name: 'any_ops', sources: ['ops/any.cu'] });
  const r: unknown = untyped.anything?.(x, 1);
  await gx.save('w.safetensors', { x, s }, { metadata: { step: '1' } });
  await gx.save('x.npz', x, { compressed: true });
  const loaded: Record<string, gx.Tensor> = await gx.loadTensors('w.safetensors', { device: 'cuda' });
  const one: gx.Tensor = await gx.loadTensor('x.npy', { format: 'npy' });
  const info: gx.TensorFileInfo = await gx.inspectTensors('x.npz');
  using wt = gx.ones([3]).requiresGrad_();
  using adamw = new gx.optim.AdamW([wt], { lr: 1e-3, betas: [0.9, 0.95] });
  adamw.zeroGrad();
  adamw.step();
  using sgd = new gx.optim.SGD([{ params: [wt], lr: 0.1 }], { momentum: 0.9 });
  sgd.paramGroups[0].lr *= 0.5;
  const opt: gx.optim.Optimizer = sgd;
  using lbfgs = new gx.optim.LBFGS([wt], { lineSearchFn: 'strong_wolfe' });
  using lbLoss: gx.Tensor = lbfgs.step(() => gx.sum(wt));
  const state: gx.optim.OptimizerStateDict<gx.optim.SGDOptions> = sgd.stateDict();
  const stream = new gx.Stream({ priority: -1 });
  gx.withStream(stream, () => gx.cuda.synchronize());
  const axes = s1.numel + am.numel + p32.numel + p64.numel + c64.numel + v.numel + cat.numel + sq.numel;
  return axes + n + Number(big) + Number(flag) + s.numel + f64.numel + h.numel + g.numel + b.numel + like.numel + values.numel +
    indices.numel + z.numel + (r === undefined ? 0 : 1) + Object.keys(loaded).length + one.numel + info.tensors.x.shape.length +
    opt.params.length + lbLoss.numel + state.paramGroups.length;
}
`;

/** Wrong programs, one per file: the error each must give (file, then a pattern of the message). */
const BAD: Record<string, { text: string; error: RegExp }> = {
  'option.mts': {
    text: "import * as gx from 'gpuext';\ngx.ones([2, 3]).sum({ keepdim: true });\n",
    error: /option\.mts\(2,\d+\): error TS\d+: [^]*?'keepdim' does not exist in type '[^']*ReduceOptions'/,
  },
  'op-name.mts': {
    text: "import * as gx from 'gpuext';\nconst ops = await gx.loadInline({ name: 'o', cuda: '', schemas: ['add_gpu(Tensor a, Tensor b) -> Tensor'] });\n" +
      'ops.addGPU(gx.ones([1]), gx.ones([1]));\n',
    error: /op-name\.mts\(3,\d+\): error TS2551: Property 'addGPU' does not exist .*Did you mean 'addGpu'\?/,
  },
  'op-arg.mts': {
    text: "import * as gx from 'gpuext';\nconst ops = await gx.loadInline({ name: 'o', cuda: '', schemas: ['scale(Tensor x, float s) -> Tensor'] });\n" +
      "ops.scale(gx.ones([1]), 'two');\n",
    error: /op-arg\.mts\(3,\d+\): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'/,
  },
  'op-typed.mts': {
    text: "import * as gx from 'gpuext';\ninterface AddOps { addGpu(a: gx.Tensor, b: gx.Tensor): gx.Tensor }\n" +
      "const ops = await gx.load<AddOps>({ name: 'o', sources: ['a.cu'] });\nops.addGpu(gx.ones([1]));\n",
    error: /op-typed\.mts\(4,\d+\): error TS2554: Expected 2 arguments, but got 1/,
  },
  'item.mts': {
    text: "import * as gx from 'gpuext';\nconst big: bigint = gx.arange(5).sum().item();\n",
    error: /item\.mts\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'bigint'/,
  },
  'save.mts': {
    text: "import * as gx from 'gpuext';\nawait gx.save('x.npz', gx.ones([1]), { compress: true });\n",
    error: /save\.mts\(2,\d+\): error TS\d+: [^]*?'compress' does not exist in type 'SaveOptions'/,
  },
  'optim.mts': {
    text: "import * as gx from 'gpuext';\nnew gx.optim.SGD([gx.ones([1]).requiresGrad_()], { lr: 0.1, momentun: 0.9 });\n",
    error: /optim\.mts\(2,\d+\): error TS\d+: [^]*?'momentun' does not exist in type 'SGDOptions'/,
  },
  'to.mts': {
    text: "import * as gx from 'gpuext';\nconst t: gx.Tensor<'float32'> = gx.ones([2]).to('float64');\n",
    error: /to\.mts\(2,\d+\): error TS2322: Type 'Tensor<"float64">' is not assignable to type 'Tensor<"float32">'/,
  },
};

if (compilers.length === 0) throw new Error('types.test: the project\'s own typescript was not found');
if (!majors.has('6') || !majors.has('7')) {
  test.skip(`types: TypeScript ${['6', '7'].filter((m) => !majors.has(m)).join(' and ')} not installed ` +
    '(npm ci installs the typescript-6 / typescript-7 devDependencies; or list package directories in GPUEXT_TEST_TYPESCRIPTS)', () => {});
}

for (const c of compilers) {
  for (const esm of [true, false]) {
    const kind = esm ? 'ESM (.mts, import * as gx)' : 'CommonJS (.ts, import * as gx)';
    // Serial: each compile takes a core for seconds (the machine's others run the rest of the suite).
    test.serial(`TypeScript ${c.version}, ${kind}: a correct program compiles with no @types/node`, async (t) => {
      t.timeout(120_000);
      const dir = project(`good-${c.version}-${esm ? 'esm' : 'cjs'}`, esm, { [esm ? 'main.mts' : 'main.ts']: GOOD });
      const r = await compile(c, dir);
      t.is(r.out.trim(), '', 'no diagnostics');
      t.is(r.code, 0);
    });
  }
  test.serial(`TypeScript ${c.version}: wrong programs fail, each with its own error and none in gpuext's declarations`, async (t) => {
    t.timeout(120_000);
    const dir = project(`bad-${c.version}`, true, Object.fromEntries(Object.entries(BAD).map(([f, b]) => [f, b.text])));
    const r = await compile(c, dir);
    t.not(r.code, 0);
    for (const [file, b] of Object.entries(BAD)) t.regex(r.out, b.error, file);
    const lines = r.out.split('\n').filter((l) => /error TS\d+/.test(l));
    t.is(lines.length, Object.keys(BAD).length, `one error per file:\n${r.out}`);
    t.false(r.out.includes('node_modules/gpuext'), r.out);
  });
}
