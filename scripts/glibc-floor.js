#!/usr/bin/env node
// The oldest system the prebuilt linux binaries load on, and the link flags
// that hold them to it (NOTE [ The glibc floor of the prebuilt binaries ] in
// csrc/compat/glibc_floor.cpp). Used by binding.gyp and build-ops.js when
// GPUEXT_PREBUILD=1 (scripts/prebuild.js), and by scripts/check-package.js,
// which fails a binary needing more than FLOOR; the README states the same
// floor (the package check compares).
//   node scripts/glibc-floor.js ldflags    -> the link flags, one line
//   node scripts/glibc-floor.js shim       -> the shim source (relative to the root)
//   node scripts/glibc-floor.js versions F -> the versions binary F needs, as JSON
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');

// manylinux_2_28's floor (RHEL 8, Ubuntu 20.04, Amazon Linux 2023): glibc 2.28
// and gcc 8's runtime. Libstdc++ is linked in, so a prebuilt binary should
// need no GLIBCXX_ or CXXABI_ version at all; the figures are the most one may.
const FLOOR = { GLIBC: '2.28', GLIBCXX: '3.4.25', CXXABI: '1.3.11', GCC: '7.0.0' };

const SHIM = 'csrc/compat/glibc_floor.cpp';

/** The symbols the shim wraps: each GX_PIN(name), GX_PIN_AT(name, ...), GX_FORWARD(name, ...) and each __wrap_name it defines. */
function wrappedSymbols() {
  // Not the macros' own text, nor the comments.
  const text = fs.readFileSync(path.join(root, SHIM), 'utf8').replace(/^\s*#define.*(\\\n.*)*$/gm, '').replace(/\/\/.*$/gm, '');
  const names = [...text.matchAll(/\bGX_(?:PIN|PIN_AT|FORWARD)\((\w+)|\b__wrap_(\w+)/g)].map((m) => m[1] ?? m[2]);
  return [...new Set(names)].sort();
}

/**
 * The link flags of a prebuilt binary: the C++ runtime linked in and kept
 * private (--exclude-libs hides the archive's symbols; -Bsymbolic binds the
 * std:: templates our code instantiates, which stay exported, to our own
 * copy rather than to the process's libstdc++), the wrapped symbols, and
 * libdl/libpthread/librt named (before glibc 2.34 the pinned dl*, pthread_* and shm_* live
 * there; later they are empty stubs). And -s: no static symbol table (the
 * dynamic one stays), 1.5 MB of a CPU-only gx_ops.node's 6.6, 2.8 MB of a
 * one-arch CUDA one's 27.1.
 */
function linkFlags() {
  return ['-s', '-static-libstdc++', '-Wl,--exclude-libs,ALL', '-Wl,-Bsymbolic', ...wrappedSymbols().map((s) => `-Wl,--wrap=${s}`),
    '-Wl,--no-as-needed,-l:libdl.so.2,-l:libpthread.so.0,-l:librt.so.1,--as-needed'];
}

/** Compares dotted versions: negative, zero or positive. */
function compareVersions(a, b) {
  const x = a.split('.').map(Number), y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/**
 * The highest version of each FLOOR family a binary needs, and the symbols
 * above the floor: { highest: { GLIBC: '2.27', ... }, over: ['exp@GLIBC_2.29', ...] }.
 * readelf reads any ELF machine (objdump only the host's).
 */
function neededVersions(file) {
  const r = spawnSync('readelf', ['--dyn-syms', '--wide', file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`readelf --dyn-syms ${file}: ${(r.stderr || '').slice(0, 500)}`);
  const highest = {};
  const over = [];
  for (const m of r.stdout.matchAll(/ UND (\S+)@(GLIBC|GLIBCXX|CXXABI|GCC)_(\d+(?:\.\d+)*)/g)) {
    const [, sym, family, version] = m;
    if (highest[family] === undefined || compareVersions(version, highest[family]) > 0) highest[family] = version;
    if (compareVersions(version, FLOOR[family]) > 0) over.push(`${sym}@${family}_${version}`);
  }
  return { highest, over: [...new Set(over)].sort() };
}

module.exports = { FLOOR, SHIM, wrappedSymbols, linkFlags, compareVersions, neededVersions };

if (require.main === module) {
  const what = process.argv[2];
  if (what === 'ldflags') console.log(linkFlags().join(' '));
  else if (what === 'shim') console.log(SHIM);
  else if (what === 'versions' && process.argv[3]) console.log(JSON.stringify(neededVersions(process.argv[3])));
  else {
    console.error('usage: glibc-floor.js ldflags|shim|versions FILE');
    process.exit(2);
  }
}
