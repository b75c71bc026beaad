// NOTE [ Fast module exports ]: every call into a module through an import
// (`common_1.computeResult(...)` in the emitted CommonJS) loads a property of
// that module's exports object. TypeScript emits a re-export (`export { x }`
// of an imported x, or `export { x } from`) as `exports.x = void 0` and then
// redefines x as a getter, and V8 turns an object whose data property became
// an accessor into a dictionary: each load from it is then a hash lookup and a
// getter call, not an inline field load. So modules the ops call into export
// only what they define, and importers import a name from where it is defined.
// Only the namespaces (lib/index.ts and what is exported as `export * as
// name`) are made of re-exports. This test checks V8's own answer in a child
// process (--allow-natives-syntax): after loading gx and running ops, no other
// module's exports object is in dictionary mode.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const DIST_LIB = path.join(__dirname, '..', 'lib');
const SOURCE_LIB = path.join(__dirname, '..', '..', 'lib');

const CHILD = `
const lib = ${JSON.stringify(DIST_LIB)};
const gx = require(lib);
const a = gx.tensor([1, 2, 3]);
gx.tidy(() => { gx.mul(a, 2); gx.sum(a); gx.softmax(a, 0); a.reshape(3, 1).matmul(a.reshape(1, 3)); });
const probe = { x: 1, y: 2 };
delete probe.x;  // a dictionary-mode object: the check below can see one
const slow = Object.keys(require.cache)
  .filter((k) => k.startsWith(lib + '/') && !%HasFastProperties(require.cache[k].exports))
  .map((k) => k.slice(lib.length + 1));
console.log(JSON.stringify({ seesDictionary: !%HasFastProperties(probe), loaded: Object.keys(require.cache).length, slow }));
`;

/** lib/index.ts and every module lib/ exports as a namespace (`export * as name from './m'`), as dist paths. */
function namespaceModules(): Set<string> {
  const found = new Set(['index.js']);
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) {
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/^export \* as \w+ from '([^']+)';/gm)) {
          found.add(path.relative(SOURCE_LIB, path.resolve(dir, m[1])) + '.js');
        }
      }
    }
  };
  walk(SOURCE_LIB);
  return found;
}

test('only the namespaces are dictionary-mode exports objects (NOTE [ Fast module exports ])', (t) => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', CHILD], { encoding: 'utf8', timeout: 60_000 });
  t.is(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { seesDictionary: boolean; loaded: number; slow: string[] };
  t.true(got.seesDictionary, 'the child cannot tell a dictionary-mode object');
  t.true(got.loaded > 100, `only ${got.loaded} modules loaded`);
  const namespaces = namespaceModules();
  t.true(namespaces.size > 5, `found ${namespaces.size} namespace modules`);
  const faults = got.slow.filter((m) => !namespaces.has(m));
  t.deepEqual(faults, [], `dictionary-mode exports (a re-export of an imported name?): ${faults.join(', ')}`);
});
