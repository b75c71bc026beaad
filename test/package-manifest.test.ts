// The published package.json (scripts/pack-manifest.js, NOTE [ Publishing the
// packed tarball ]): the installer's scripts only, every other field as the
// checkout has it; and the checkout's own manifest keeps what the published
// one drops.
import test from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
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

test('npm pack of a package set up like this one ships the stripped manifest and leaves the checkout as it was; npm publish from the directory is refused', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-pack-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const real = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // The real lifecycle scripts, less the compile and the prebuild before the strip.
  const scripts = { ...real.scripts, prepack: 'node scripts/pack-manifest.js strip' };
  const text = `${JSON.stringify({ name: 'packed-like-gpuext', version: '1.0.0', files: ['index.js'], scripts }, null, 2)}\n`;
  fs.mkdirSync(path.join(dir, 'scripts'));
  fs.copyFileSync(path.join(root, 'scripts/pack-manifest.js'), path.join(dir, 'scripts/pack-manifest.js'));
  fs.writeFileSync(path.join(dir, 'package.json'), text);
  fs.writeFileSync(path.join(dir, 'index.js'), `module.exports = ${Math.random()};\n`);
  const env = { ...process.env, npm_config_cache: path.join(dir, '.npm-cache'), npm_config_update_notifier: 'false' };
  const pack = spawnSync('npm', ['pack', '--json'], { cwd: dir, encoding: 'utf8', env });
  t.is(pack.status, 0, pack.stderr);
  const tgz = (JSON.parse(pack.stdout) as { filename: string }[])[0].filename;
  const inside = spawnSync('tar', ['-xzOf', path.join(dir, tgz), 'package/package.json'], { encoding: 'utf8' });
  const shipped = JSON.parse(inside.stdout) as { scripts: Record<string, string> };
  t.deepEqual(shipped.scripts, { install: real.scripts.install });
  t.is(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'), text, 'postpack restored the checkout byte for byte');
  t.false(fs.existsSync(path.join(dir, '.package.json.dev')));

  const publish = spawnSync('npm', ['publish', '--dry-run'], { cwd: dir, encoding: 'utf8', env });
  t.not(publish.status, 0);
  t.regex(publish.stderr, /packed-like-gpuext: publish the packed tarball[^]*npm run release/);
});
