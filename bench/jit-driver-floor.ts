// The CUDA driver's JIT of PTX in one fresh process, the floor under a jit
// kernel's cold first call (NOTE [ PTX path ] in lib/jit/emit-ptx.ts): an
// empty kernel loaded first (the JIT's start in this process, and the
// module), another empty one (each kernel has a name of its own: the driver
// reuses a module of the same text), then a kernel of one float32 division
// (div.rn.f32, whose slow path the JIT compiles with it) and one of four. bench/jit.bench.ts
// spawns it with an empty CUDA_CACHE_PATH, so the driver's cache is cold:
//
//   node dist/bench/jit-driver-floor.js
//
// Prints one JSON line: ms per module load, in that order.
import * as path from 'path';

import type * as GX from '../lib';
import type * as Native from '../lib/core/native';
import { PTX_HEADER } from '../lib/jit/emit-ptx';

/** A kernel `name` reading one float, dividing it by a parameter `divisions` times, and storing it, as PTX text (the header the jit's modules carry). */
function ptx(name: string, divisions: number): string {
  const body = Array.from({ length: divisions }, () => '  div.rn.f32 %f1, %f1, %f0;').join('\n');
  return `${PTX_HEADER}.visible .entry ${name}(.param .u64 p, .param .f32 a)
{
  .reg .f32 %f<2>;
  .reg .s64 %rd<1>;
  ld.param.u64 %rd0, [p];
  cvta.to.global.u64 %rd0, %rd0;
  ld.param.f32 %f0, [a];
  ld.global.f32 %f1, [%rd0];
${body}
  st.global.f32 [%rd0], %f1;
  ret;
}
`;
}

function main(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const gx = require(path.join(__dirname, '..', 'lib')) as typeof GX;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { native } = require(path.join(__dirname, '..', 'lib', 'core', 'native')) as typeof Native;
  const one = gx.ones([1], { device: 'cuda' });
  gx.cuda.synchronize();
  const loadMs = (name: string, divisions: number): number => {
    const image = new TextEncoder().encode(`${ptx(name, divisions)}\0`);
    const t0 = process.hrtime.bigint();
    native.moduleLoad(one.device.index, image);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const firstEmpty = loadMs('first', 0);
  const empty = loadMs('empty', 0);
  const oneDivision = loadMs('one_division', 1);
  const fourDivisions = loadMs('four_divisions', 4);
  console.log(JSON.stringify({ firstEmpty, empty, oneDivision, fourDivisions }));
}

main();
