#!/usr/bin/env node
// The package.json a published package carries: the checkout's, with only
// the scripts an installer runs (`install`). npm shows every install-time
// script of a package to the people installing it, and runs `prepare` for git
// dependencies; the development scripts (tsc, the ops build, benchmarks) are
// nothing an installer needs or should see quoted.
//
// NOTE [ Publishing the packed tarball ]
// npm 11 has no way to leave fields out of the published manifest
// (publishConfig overrides registry settings, not scripts), so `npm pack`
// rewrites package.json around the packing: prepack runs `strip` (after tsc
// and the prebuild), npm packs the files as they are on disk, postpack runs
// `restore`. The tarball holds the stripped package.json. (npm reads the
// scripts after prepack, so `prepare` no longer runs during a pack: prepack
// compiles the TypeScript itself.) But `npm publish`
// from the directory sends the registry the manifest it re-reads after
// postpack restored it (npm's lib/commands/publish.js), so the registry's
// copy would list the development scripts again: a release publishes the
// tarball (`npm run release`: `npm pack`, then `npm publish <tarball>`, whose
// manifest npm reads from the tarball), and prepublishOnly refuses a
// directory publish with that command.
//   node scripts/pack-manifest.js strip | restore | refuse-directory-publish
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const manifest = path.join(root, 'package.json');
/** The checkout's package.json while a pack runs (a leftover means a pack died: `strip` and `restore` put it back first). */
const backup = path.join(root, '.package.json.dev');
/** The only scripts an installed package keeps. */
const PUBLISHED_SCRIPTS = ['install'];

/** The published form of a package.json text. */
function published(text) {
  const pkg = JSON.parse(text);
  const scripts = {};
  for (const name of PUBLISHED_SCRIPTS) if (pkg.scripts && pkg.scripts[name] !== undefined) scripts[name] = pkg.scripts[name];
  pkg.scripts = scripts;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function restore() {
  if (fs.existsSync(backup)) fs.renameSync(backup, manifest);
}

function strip() {
  restore();
  const text = fs.readFileSync(manifest, 'utf8');
  fs.writeFileSync(backup, text);
  fs.writeFileSync(manifest, published(text));
}

function main(command) {
  switch (command) {
    case 'strip':
      strip();
      return 0;
    case 'restore':
      restore();
      return 0;
    case 'refuse-directory-publish': {
      const { name, version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      console.error(`${name}: publish the packed tarball, so that the registry gets the manifest the tarball holds ` +
        `(NOTE [ Publishing the packed tarball ] in scripts/pack-manifest.js):\n  npm run release\n` +
        `(which runs: npm pack && npm publish ${name}-${version}.tgz)`);
      return 1;
    }
    default:
      console.error('usage: node scripts/pack-manifest.js strip | restore | refuse-directory-publish');
      return 2;
  }
}

if (require.main === module) process.exitCode = main(process.argv[2]);

module.exports = { published, PUBLISHED_SCRIPTS };
