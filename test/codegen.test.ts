// The generated bindings of an extension (lib/toolkit/codegen.ts): an op whose
// camelCase name is a JS reserved word (`var`, `delete`) still gives valid
// JavaScript and TypeScript, exported under the op's own name, as CommonJS and
// as an ES module; which module system "outputFormat" and the package choose.
import { parse } from 'acorn';
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';
import ts from 'typescript';
import vm from 'vm';

import { renderDts, renderJs } from '../lib/toolkit/codegen';
import { resolveConfig } from '../lib/toolkit/config';
import { ConfigError } from '../lib/toolkit/errors';
import { bindingFiles, esmRuntimeSpecifier } from '../lib/toolkit/module-format';
import type { ExtensionDescriptor, OpDescriptor } from '../lib/extension/runtime';

function op(name: string): OpDescriptor {
  return {
    id: -1, name, qualifiedName: `ext::${name}`, schema: `${name}(Tensor self) -> Tensor`, doc: '', devices: ['cpu'],
    args: [{ name: 'self', type: 'Tensor', kwOnly: false }], returns: [{ name: '', type: 'Tensor' }], returnsTuple: false,
  };
}

test('ops named like reserved words get valid bindings exported under their own names', (t) => {
  const desc: ExtensionDescriptor = { path: '/x/ext.node', abiVersion: [1, 0], ops: [op('var'), op('delete'), op('add_one')] };
  const opts = { outDir: '/x', name: 'ext', configPath: 'setup.config.json' };
  const js = renderJs(desc, opts);
  t.notThrows(() => new vm.Script(js), 'the JS parses');
  t.regex(js, /function var_\(self\) \{/);
  t.regex(js, /exports\.var = var_;/);
  t.regex(js, /exports\.addOne = addOne;/);
  const dts = renderDts(desc, opts);
  const sf = ts.createSourceFile('ext.d.ts', dts, ts.ScriptTarget.ES2022, true);
  const diags = (sf as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
  t.deepEqual(diags.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'the .d.ts parses');
  t.regex(dts, /declare function var_\(self: Tensor\): Tensor;\nexport \{ var_ as var \};/);
  t.regex(dts, /export declare function addOne\(/);
});

test('the ES module binding parses as a module and exports under the ops\' own names', (t) => {
  const desc: ExtensionDescriptor = { path: '/x/ext.node', abiVersion: [1, 0], ops: [op('var'), op('add_one'), op('gpuext'), op('path')] };
  const js = renderJs(desc, { outDir: '/x', name: 'ext', configPath: 'setup.config.json', kind: 'esm' });
  t.regex(js, /^export \{ gpuext_ as gpuext \};$/m, 'an op named like a module-level name of the binding');
  t.notThrows(() => new vm.Script(renderJs(desc, { outDir: '/x', name: 'ext', configPath: 'setup.config.json' })), 'the CommonJS one too');
  t.notThrows(() => parse(js, { ecmaVersion: 2022, sourceType: 'module' }));
  t.throws(() => new vm.Script(js), { instanceOf: SyntaxError }, 'not a script: it has import/export');
  t.regex(js, /^import gpuext from "gpuext";$/m);
  t.regex(js, /^export const library = rt\.load\(fileURLToPath\(new URL\("\.\/ext\.node", import\.meta\.url\)\)\);$/m);
  t.regex(js, /^export \{ var_ as var \};$/m);
  t.regex(js, /^export \{ addOne \};$/m);
  t.notRegex(js, /require\(|exports\./);
  t.regex(js, /^  if \(arguments\.length !== 1\) rt\.arity\(library, "add_one", arguments\.length\);$/m);
});

test('outputFormat: auto follows the nearest package.json of outDir; esm, cjs, both; a bad value names the field', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-format-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const out = path.join(dir, 'app', 'build');  // need not exist yet
  fs.mkdirSync(path.join(dir, 'app'));
  const kinds = (format: 'auto' | 'esm' | 'cjs' | 'both'): string[] =>
    bindingFiles(out, 'ops', format).map((f) => `${f.kind} ${path.basename(f.js)} ${path.basename(f.dts)}`);
  t.deepEqual(kinds('auto'), ['cjs ops.js ops.d.ts'], 'no package.json: CommonJS, as Node reads a .js there');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  t.deepEqual(kinds('auto'), ['esm ops.js ops.d.ts'], 'a "type": "module" package above');
  fs.writeFileSync(path.join(dir, 'app', 'package.json'), JSON.stringify({ name: 'app' }));
  t.deepEqual(kinds('auto'), ['cjs ops.js ops.d.ts'], 'the nearest package.json decides');
  t.deepEqual(kinds('esm'), ['esm ops.js ops.d.ts']);
  t.deepEqual(kinds('cjs'), ['cjs ops.js ops.d.ts']);
  t.deepEqual(kinds('both'), ['esm ops.mjs ops.d.mts', 'cjs ops.cjs ops.d.cts']);

  t.is(resolveConfig({ name: 'a', sources: ['x.cpp'] }, 'f', '/p').outputFormat, 'auto');
  t.is(resolveConfig({ name: 'a', sources: ['x.cpp'], outputFormat: 'both' }, 'f', '/p').outputFormat, 'both');
  const e = t.throws(() => resolveConfig({ name: 'a', sources: ['x.cpp'], outputFormat: 'module' }, 'setup.config.json', '/p'),
    { instanceOf: ConfigError });
  t.is(e?.message, 'setup.config.json: "outputFormat" must be one of "auto", "esm", "cjs", "both", got "module"');
});

test('an ES module binding imports a runtime given as a path by its file', (t) => {
  const root = path.resolve(__dirname, '../..');
  t.is(esmRuntimeSpecifier('gpuext', '/x/build', 'c.json'), 'gpuext', 'a package name stays');
  t.is(esmRuntimeSpecifier(root, '/x/build', 'c.json'), path.join(root, 'dist/lib/index.js'), 'a directory: its main file');
  t.is(esmRuntimeSpecifier('../lib/index', path.join(root, 'dist/test'), 'c.json'), '../lib/index.js', 'relative to outDir');
  t.throws(() => esmRuntimeSpecifier('./nowhere', '/x/build', 'c.json'), { instanceOf: ConfigError, message: /^c\.json: "runtimeImport" "\.\/nowhere" resolves to no module from \/x\/build/ });
});

test('an op whose arguments all have a slot form is called staged, with no rest array; others by rt.call', (t) => {
  const scale: OpDescriptor = {
    ...op('scale'), schema: 'scale(Tensor x, float alpha, int? n, *, bool flag=False) -> Tensor',
    args: [{ name: 'x', type: 'Tensor', kwOnly: false }, { name: 'alpha', type: 'float', kwOnly: false },
      { name: 'n', type: 'int?', kwOnly: false }, { name: 'flag', type: 'bool', kwOnly: true, default: false }],
  };
  const sum: OpDescriptor = { ...op('sum_dims'), args: [{ name: 'x', type: 'Tensor', kwOnly: false }, { name: 'dims', type: 'int[]', kwOnly: false }] };
  const js = renderJs({ path: '/x/ext.node', abiVersion: [1, 0], ops: [scale, sum] }, { outDir: '/x', name: 'ext', configPath: 'setup.config.json' });
  t.notThrows(() => new vm.Script(js));
  // Three slots per argument, at the argument's place in the schema; the core's words name the qualified op.
  t.regex(js, /rt\.stageFloat\(alpha, "ext::scale", 'alpha', 3\);\n {2}rt\.stageInt\(n, "ext::scale", 'n', 6\);\n {2}rt\.stageBool\(o\.flag, "ext::scale", 'flag', 9\);/);
  t.regex(js, /rt\.callStaged\(scaleId, rt\.tensor\(x, 'scale', 'x'\)\)/);
  t.regex(js, /rt\.call\(sumDimsId, rt\.tensor\(x, 'sumDims', 'x'\), dims\)/);
  t.notRegex(js, /rt\.stage\w+\([^)]*'dims'/);
});
