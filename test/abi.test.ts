// The C ABI's versioning (NOTE [ Why a C table ] in csrc/include/gpuext/abi.h):
// an extension built against an earlier minor version keeps loading and
// working (test/fixtures/abi-1.0: one declaring 1.0 and reading only 1.0's
// entries), one built for a newer minor than the core's is refused with the fix.
import test from 'ava';
import { execFileSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { native } from '../lib/core/native';
import { detectToolchain, requireCxx } from '../lib/toolkit/toolchain';

const root = path.resolve(__dirname, '../..');
const fixture = path.join(root, 'test/fixtures/abi-1.0/abi10.cpp');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-abi-'));

/** The fixture built as a shared library declaring ABI 1.<minor>. */
function build(minor: number): string {
  const [cxx, ...pre] = requireCxx(detectToolchain());
  const out = path.join(dir, `abi1${minor}.node`);
  execFileSync(cxx, [...pre, '-std=c++17', '-O1', '-shared', '-fPIC', '-fvisibility=hidden', `-DFIXTURE_MINOR=${minor}`,
    `-I${path.join(root, 'csrc/include')}`, fixture, '-o', out]);
  return out;
}

test('an extension built against C ABI 1.0 loads in this core and its op works', (t) => {
  const file = build(0);
  const [major, minor] = native.describeExtension(file).abiVersion;
  t.is(major, 1);
  t.true(minor >= 1, 'the core provides a later minor version than the fixture declares');
  const lib = gx.loadLibrary(file);
  using x = gx.randn([7], { dtype: 'float64', generator: new gx.Generator(3) });
  using y = lib.functions.twice(x) as gx.Tensor;
  const xs = x.toArraySync() as Float64Array;
  t.deepEqual(Array.from(y.toArraySync() as Float64Array), Array.from(xs, (v) => 2 * v));
});

test('an extension built for a newer minor version than the core is refused, saying to rebuild', (t) => {
  const file = build(99);
  t.throws(() => gx.loadLibrary(file), { message: /built for gpuext C ABI 1\.99 but this core provides 1\.\d+; rebuild it with `npx gpuext build`/ });
});
