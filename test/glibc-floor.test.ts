// The glibc floor of the prebuilt binaries (scripts/glibc-floor.js and
// csrc/compat/glibc_floor.cpp, NOTE [ The glibc floor of the prebuilt binaries ]):
// a shared library using what the binaries use (libm, threads, dl*, stat,
// exceptions, std::random_device) built as the prebuilds are needs no symbol
// version above the floor and still computes what it should (a plain loader
// runs it); built plainly on this machine it needs more. The packed binaries themselves are checked by
// scripts/check-package.js (CI).
import test from 'ava';
import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

const root = path.resolve(__dirname, '../..');

interface Needed { highest: Record<string, string>; over: string[] }
const floor = require(path.join(root, 'scripts/glibc-floor.js')) as {
  FLOOR: Record<string, string>;
  SHIM: string;
  wrappedSymbols(): string[];
  linkFlags(): string[];
  neededVersions(file: string): Needed;
  compareVersions(a: string, b: string): number;
};

const PROGRAM = String.raw`
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <thread>
extern "C" __attribute__((visibility("default"))) int probe(char** argv) {
  volatile double x = std::atof(argv[1]);  // not foldable: libm is called
  double e = std::exp(x), l = std::log(x), p = std::pow(x, 2.5), l2 = std::log2(x), e2 = std::exp2(x);
  double h = std::hypot(x, 4.0);
  float hf = hypotf(static_cast<float>(x), 4.0f);
  struct stat st;
  long long size = stat(argv[2], &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  int value = 0;
  std::thread th([&] { value = 42; });
  th.join();
  std::random_device rd;
  unsigned r = rd();
  (void)r;
  void* self = dlopen(nullptr, RTLD_NOW);
  int found = self != nullptr && dlsym(self, "malloc") != nullptr;
  if (self) dlclose(self);
  std::string msg;
  try {
    throw std::runtime_error("thrown " + std::to_string(value));
  } catch (const std::exception& ex) {
    msg = ex.what();
  }
  // strtol and sscanf: __isoc23_ names under glibc 2.38's headers.
  long parsed = std::strtol(argv[3], nullptr, 0);
  int scanned = 0;
  std::sscanf(argv[3], "%d", &scanned);
  auto shared = std::make_shared<int>(7);
  auto copy = shared;
  std::printf("%.17g %.17g %.17g %.17g %.17g %.17g %.9g %lld %d %d %ld [%s] %ld %d\n", e, l, p, l2, e2, h, hf, size, value, found,
              copy.use_count(), msg.c_str(), parsed, scanned);
  return 0;
}
`;

// Loads the library and runs probe(): built plainly (an executable needs the builder's __libc_start_main).
const LOADER = String.raw`
#include <cstdio>
#include <dlfcn.h>
int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { std::fprintf(stderr, "%s\n", dlerror()); return 2; }
  auto probe = reinterpret_cast<int (*)(char**)>(dlsym(lib, "probe"));
  return probe ? probe(argv + 1) : 3;
}
`;

function compile(cxx: string, args: string[]): void {
  const r = spawnSync(cxx, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cxx} ${args.join(' ')}:\n${r.stderr}`);
}

/** Builds PROGRAM as a shared library with `cxx` (and the floor's shim and link flags when `floored`); returns its path. */
function build(dir: string, cxx: string, floored: boolean): string {
  const src = path.join(dir, 'probe.cpp');
  fs.writeFileSync(src, PROGRAM);
  const out = path.join(dir, `probe-${floored ? 'floor' : 'plain'}-${path.basename(cxx)}.so`);
  compile(cxx, ['-std=c++17', '-O2', '-fPIC', '-fvisibility=hidden', '-shared', '-Wl,-z,now', '-o', out, src,
    ...(floored ? [path.join(root, floor.SHIM), ...floor.linkFlags()] : [])]);
  return out;
}

/** Builds the loader with `cxx`; returns its path. */
function buildLoader(dir: string, cxx: string): string {
  const src = path.join(dir, 'loader.cpp');
  fs.writeFileSync(src, LOADER);
  const out = path.join(dir, 'loader');
  compile(cxx, ['-std=c++17', '-O2', '-o', out, src, '-ldl']);
  return out;
}

function hasCompiler(cxx: string): boolean {
  return spawnSync(cxx, ['--version']).status === 0;
}

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'gx-floor-'));
}

test('the shim\'s wrapped symbols are read from its source, and each is wrapped at the link', (t) => {
  const names = floor.wrappedSymbols();
  for (const s of ['dlopen', 'pthread_create', 'exp', 'hypot', 'stat64', '__libc_single_threaded', 'arc4random']) t.true(names.includes(s), s);
  // Not the names in the macros' bodies or the comments.
  t.false(names.some((n) => /^(NAME|sym|__wrap)$/.test(n)), names.join(' '));
  const flags = floor.linkFlags();
  t.deepEqual(flags.filter((f) => f.startsWith('-Wl,--wrap=')).map((f) => f.slice('-Wl,--wrap='.length)), names);
  t.true(flags.includes('-static-libstdc++'));
});

test('built as the prebuilds are, a library needs nothing above the floor and computes what it should', (t) => {
  if (!hasCompiler('g++')) return t.pass('no g++ here');
  const dir = tmp();
  try {
    const exe = build(dir, 'g++', true);
    const { highest, over } = floor.neededVersions(exe);
    t.deepEqual(over, [], JSON.stringify(highest));
    t.false('GLIBCXX' in highest, 'libstdc++ is linked in');
    t.false('CXXABI' in highest);
    // Random inputs: x in (0.5, 3.5), a file of a random size.
    const x = 0.5 + 3 * Math.random();
    const size = 1 + Math.floor(Math.random() * 100000);
    const file = path.join(dir, 'sized');
    fs.writeFileSync(file, Buffer.alloc(size, 7));
    const int = Math.floor(Math.random() * 2e9) - 1e9;
    const r = spawnSync(buildLoader(dir, 'g++'), [exe, x.toPrecision(17), file, String(int)], { encoding: 'utf8' });
    t.is(r.status, 0, r.stderr);
    const m = /^(\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) \[(.*)\] (\S+) (\S+)$/.exec(r.stdout.trim());
    if (!m) return t.fail(r.stdout);
    const got = m.slice(1, 8).map(Number);
    const want = [Math.exp(x), Math.log(x), Math.pow(x, 2.5), Math.log2(x), Math.pow(2, x), Math.hypot(x, 4), Math.fround(Math.hypot(Math.fround(x), 4))];
    // libm and V8 may round the last place differently; float hypot to float precision.
    got.forEach((g, i) => t.true(Math.abs(g - want[i]) <= (i === 6 ? 2e-7 : 4e-16) * Math.abs(want[i]), `result ${i}: ${g} vs ${want[i]}`));
    t.is(Number(m[8]), size, 'stat through __xstat64 gives the size');
    t.is(m[9], '42', 'a std::thread ran');
    t.is(m[10], '1', 'dlopen/dlsym found malloc');
    t.is(m[11], '2', 'shared_ptr counts');
    t.is(m[12], 'thrown 42', 'an exception was caught with its message');
    t.is(Number(m[13]), int, 'strtol');
    t.is(Number(m[14]), int, 'sscanf');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('built plainly on a glibc above the floor, the same library needs more (the check can fail)', (t) => {
  const runtime = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  if (!hasCompiler('g++') || runtime === undefined || floor.compareVersions(runtime, '2.34') < 0) return t.pass(`glibc ${runtime ?? 'unknown'}`);
  const dir = tmp();
  try {
    const { over } = floor.neededVersions(build(dir, 'g++', false));
    // exp got a new version at 2.29; dlopen moved into libc.so.6 at 2.34 with a new one.
    t.true(over.includes('exp@GLIBC_2.29'), over.join(' '));
    t.true(over.includes('dlopen@GLIBC_2.34'), over.join(' '));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('cross-built for linux-arm64 (where aarch64-linux-gnu-g++ is installed), nothing above the floor either', (t) => {
  if (!hasCompiler('aarch64-linux-gnu-g++')) return t.pass('no aarch64-linux-gnu-g++ here');
  const dir = tmp();
  try {
    const exe = build(dir, 'aarch64-linux-gnu-g++', true);
    t.regex(spawnSync('readelf', ['-h', exe], { encoding: 'utf8' }).stdout, /AArch64/);
    t.false(spawnSync('readelf', ['-d', exe], { encoding: 'utf8' }).stdout.includes('libstdc++'), 'libstdc++ is linked in');
    const { highest, over } = floor.neededVersions(exe);
    t.deepEqual(over, [], JSON.stringify(highest));
    t.truthy(highest.GLIBC);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
