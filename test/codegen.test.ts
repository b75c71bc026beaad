// The generated bindings of an extension (lib/toolkit/codegen.ts): an op whose
// camelCase name is a JS reserved word (`var`, `delete`) still gives valid
// JavaScript and TypeScript, exported under the op's own name.
import test from 'ava';
import ts from 'typescript';
import vm from 'vm';

import { renderDts, renderJs } from '../lib/toolkit/codegen';
import type { ExtensionDescriptor, OpDescriptor } from '../lib/extension';

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
