// The jit's math library as the PTX path reads it (NOTE [ The library's
// index ] in lib/jit/ptx-library.ts): the build's index holds what parsing
// jit-math.ptx gives, and a process takes the index only when it was made
// from the PTX beside it.
import test from 'ava';
import * as fs from 'fs';
import * as path from 'path';

import { libraryIndex, loadLibrary, parseLibrary } from '../lib/jit/ptx-library';
import { findBinary } from '../lib/platform/binaries';
import { tmpDir } from './host-cuda';

const PTX = `.version 8.0
.target sm_80
.address_size 64

.global .align 4 .b8 gx_table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.visible .func (.param .b32 func_retval0) gx_math_twice_f32(
\t.param .b32 gx_math_twice_f32_param_0
)
{
\t.reg .f32 %f<3>;
\tld.param.f32 %f1, [gx_math_twice_f32_param_0];
\tadd.rn.f32 %f2, %f1, %f1;
\tst.param.f32 [func_retval0+0], %f2;
\tret;
}
`;

const names = (lib: ReturnType<typeof loadLibrary>): string[] => (lib === null ? [] : lib.chunks.flatMap((c) => c.defines));

const opsDir = ((): string | undefined => {
  const ops = findBinary('ops');
  return ops === undefined ? undefined : path.dirname(ops);
})();
const built = opsDir !== undefined && fs.existsSync(path.join(opsDir, 'jit-math.ptx'));

(built ? test : test.skip)('the build\'s jit-math.json holds what parsing its jit-math.ptx gives, and is what a process reads', (t) => {
  const dir = opsDir as string;
  const ptx = fs.readFileSync(path.join(dir, 'jit-math.ptx'), 'utf8');
  const parsed = parseLibrary(ptx);
  t.true(fs.existsSync(path.join(dir, 'jit-math.json')), 'the build wrote the index');
  t.is(fs.readFileSync(path.join(dir, 'jit-math.json'), 'utf8'), libraryIndex(ptx));
  const loaded = loadLibrary(dir);
  t.deepEqual(loaded?.chunks, parsed.chunks);
  t.is(loaded?.header, parsed.header);
  t.true(names(loaded).includes('gx_math_exp_f32'));
});

test('an index is taken only when it was made from the PTX beside it; else the PTX is parsed; no PTX, no library', (t) => {
  const dir = tmpDir('ptx-library');
  t.is(loadLibrary(dir), null, 'no jit-math.ptx');
  fs.writeFileSync(path.join(dir, 'jit-math.ptx'), PTX);
  t.deepEqual(names(loadLibrary(dir)), ['gx_table', 'gx_math_twice_f32'], 'no index: the PTX parsed');
  // An index of the same size: read instead of the PTX (its one declaration, renamed, shows which was read).
  const index = JSON.parse(libraryIndex(PTX)) as { size: number; header: string; chunks: { defines: string[]; text: string }[] };
  index.chunks = [{ defines: ['gx_from_index'], text: index.chunks[1].text }];
  fs.writeFileSync(path.join(dir, 'jit-math.json'), JSON.stringify(index));
  t.deepEqual(names(loadLibrary(dir)), ['gx_from_index'], 'the index, made from this PTX');
  // Made from another file (another size), or not an index: the PTX is parsed.
  fs.writeFileSync(path.join(dir, 'jit-math.json'), JSON.stringify({ ...index, size: index.size + 1 }));
  t.deepEqual(names(loadLibrary(dir)), ['gx_table', 'gx_math_twice_f32'], 'a stale index');
  for (const bad of ['{', '[]', JSON.stringify({ ...index, chunks: [{ defines: [1], text: 'x' }] })]) {
    fs.writeFileSync(path.join(dir, 'jit-math.json'), bad);
    t.deepEqual(names(loadLibrary(dir)), ['gx_table', 'gx_math_twice_f32'], `a malformed index: ${bad.slice(0, 20)}`);
  }
});
