// The published package.json (scripts/pack-manifest.js, NOTE [ Publishing the
// packed tarball ]): the installer's scripts only, every other field as the
// checkout has it; and the checkout's own manifest keeps what the published
// one drops.
import test from 'ava';
import fs from 'fs';
import path from 'path';

const root = path.resolve(__dirname, '../..');
// A plain script of the checkout, required at run time (it is no TypeScript module).
const packManifest = require(path.join(root, 'scripts/pack-manifest.js')) as { published(text: string): string; PUBLISHED_SCRIPTS: string[] };

test('the published manifest keeps only the install script and every other field', (t) => {
  const names = Array.from({ length: 3 + Math.floor(Math.random() * 5) }, (_, i) => `dev:${i}-${Math.random().toString(36).slice(2, 6)}`);
  const scripts: Record<string, string> = { prepare: 'tsc', install: 'node scripts/install.js', postpack: 'x' };
  for (const n of names) scripts[n] = `node ${n}.js`;
  const pkg = { name: 'p', version: '1.2.3', keywords: ['cuda'], files: ['dist'], scripts, devDependencies: { ava: '7.0.0' } };
  const out = JSON.parse(packManifest.published(JSON.stringify(pkg))) as typeof pkg;
  t.deepEqual(out.scripts, { install: 'node scripts/install.js' });
  t.deepEqual({ ...out, scripts: undefined }, { ...pkg, scripts: undefined });
  t.deepEqual(packManifest.PUBLISHED_SCRIPTS, ['install']);
});

test("the checkout's package.json runs the strip and restore around a pack and refuses a directory publish", (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; files: string[] };
  t.regex(pkg.scripts.prepack, /pack-manifest\.js strip$/);
  t.is(pkg.scripts.postpack, 'node scripts/pack-manifest.js restore');
  t.is(pkg.scripts.prepublishOnly, 'node scripts/pack-manifest.js refuse-directory-publish');
  t.true(pkg.scripts.install !== undefined && pkg.scripts.prepare !== undefined);
  t.false(fs.existsSync(path.join(root, '.package.json.dev')), 'no pack left the checkout stripped');
});
