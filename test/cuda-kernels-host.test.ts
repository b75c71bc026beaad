// The index arithmetic of the CUDA kernels of NOTE [ The strided elementwise
// kernel ], NOTE [ Reducing outer and inner dims ], NOTE [ Reducing outer
// dims ], NOTE [ unfold at the memory limit ] and NOTE [ Max pooling with
// indices ], checked without a GPU: their
// headers, made host code (each <<<grid, block>>> launch a call that runs the
// grid's blocks and threads one after another; block_reduce folding threads
// run highest first, so thread 0 returns the block's total), compiled with g++
// beside test/fixtures/cuda-host/kernels_host.cpp, which runs the launchers
// (CudaLoops::run_strided, CudaReduce::run), the unfold / fold kernels and the
// max pooling kernels on random shapes, broadcasts, permutations and
// geometries against plain loops.
// FastDivU32 is checked against division too. The GPU suite runs the same
// paths on the device (elementwise-strided, reduce-outer, unfold-shapes).
import test from 'ava';
import * as fs from 'fs';
import * as path from 'path';

import { hasTool, runHost, tmpDir } from './host-cuda';

const REPO = path.resolve(__dirname, '..', '..');
const OPS = path.join(REPO, 'ops');

/** What stands in for <cuda_runtime.h> and the device built-ins. */
const PRELUDE = `
#include <cstdint>
#include <functional>
struct gx_dim3 { unsigned x = 0, y = 0, z = 0; gx_dim3() = default; gx_dim3(unsigned a, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
using dim3 = gx_dim3;
extern gx_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __grid_constant__
#define __shared__ static
#define __syncthreads() do {} while (0)
inline uint32_t __umulhi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
void gx_launch(gx_dim3 grid, unsigned threads, const std::function<void()>& f);
`;

/** block_reduce for threads run one at a time, highest first: thread 0 (the last) gets the fold of all. */
const BLOCK_REDUCE = `template <typename R, typename Acc>
inline Acc block_reduce(const R& r, Acc acc) {
  static Acc total; static bool have = false;
  if (threadIdx.x == blockDim.x - 1) have = false;
  total = have ? r.combine(total, acc) : acc; have = true;
  return total;
}

`;

/** Every kernel<<<grid, block, smem, stream>>>(args); as gx_launch(grid, block, [&] { kernel(args); }). */
function hostLaunches(src: string): string {
  return src.replace(/([A-Za-z_][\w:]*(?:<[^<>;]*>)?)<<<(.*?)>>>\((.*?)\);/gs, (_m, kernel: string, cfg: string, args: string) => {
    const [grid, block] = cfg.split(',');
    return `gx_launch(${grid}, ${block}, [&] { ${kernel}(${args}); });`;
  });
}

/** NOTE [ Driver launches ]' launch<kernel>(...) as host code: the grid's blocks and threads run one after another, as <<<>>>'s. */
const HOST_DRIVER_LAUNCH = `#pragma once
namespace gx::ops {
template <auto Kernel, typename Grid, typename Stream, typename... A>
void launch(Grid grid, unsigned threads, Stream, int, const A&... args) {
  gx_launch(grid, threads, [&] { Kernel(args...); });
}
}  // namespace gx::ops
`;

/** Replaces the text from `from` up to (not including) `to` in src; both must be there. */
function between(src: string, from: string, to: string, by: string): string {
  const a = src.indexOf(from), b = src.indexOf(to);
  if (a < 0 || b < a) throw new Error(`markers not found: ${from.slice(0, 40)} / ${to.slice(0, 40)}`);
  return src.slice(0, a) + by + src.slice(b);
}

/** ops/ headers as host code in dir/gen: the elementwise and reduction launchers, unfold.cu's kernels. */
function prepare(dir: string): string {
  const gen = path.join(dir, 'gen');
  for (const sub of ['common', 'reduce', 'conv', 'generated']) fs.cpSync(path.join(OPS, sub), path.join(gen, sub), { recursive: true });
  fs.copyFileSync(path.join(OPS, 'ops.h'), path.join(gen, 'ops.h'));
  fs.writeFileSync(path.join(gen, 'common', 'driver_launch.cuh'), HOST_DRIVER_LAUNCH);
  const loops = path.join(gen, 'common', 'cuda_loops.cuh');
  fs.writeFileSync(loops, hostLaunches(fs.readFileSync(loops, 'utf8').replace('#include <cuda_runtime.h>', PRELUDE)));
  const reduce = path.join(gen, 'reduce', 'cuda_reduce.cuh');
  let r = hostLaunches(fs.readFileSync(reduce, 'utf8').replace('#include <cuda_runtime.h>', ''));
  r = between(r, 'template <typename R, typename Acc>\n__device__ __forceinline__ Acc block_reduce', '// Input and output byte offsets of output element o.', BLOCK_REDUCE);
  fs.writeFileSync(reduce, r.replace('    Tensor scratch;', '    HarnessScratch scratch;'));
  fs.writeFileSync(path.join(gen, 'unfold_kernels.inc'), kernelsOf('unfold.cu', 'constexpr int kBatch'));
  fs.writeFileSync(path.join(gen, 'max_pool_kernels.inc'), kernelsOf('max_pool.cu', 'template <typename T, typename I>'));
  return gen;
}

/** The kernels of ops/conv/<file>: from `from` to the end of its anonymous namespace. */
function kernelsOf(file: string, from: string): string {
  const src = fs.readFileSync(path.join(OPS, 'conv', file), 'utf8');
  const a = src.indexOf(from), b = src.indexOf('}  // namespace', a);
  if (a < 0 || b < a) throw new Error(`ops/conv/${file}: kernel markers not found`);
  return src.slice(a, b);
}

const gxx = hasTool('g++');
(gxx ? test : test.skip)(`the CUDA kernels' index arithmetic, run on the host, equals plain loops${gxx ? '' : ' (skipped: no g++)'}`, (t) => {
  const dir = tmpDir('cuda-host');
  try {
    const gen = prepare(dir);
    const src = fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'cuda-host', 'kernels_host.cpp'), 'utf8');
    const out = runHost(src, dir, [], ['-O1', `-I${path.join(REPO, 'csrc', 'include')}`, `-I${gen}`, '-Wno-attributes']);
    const m = /checked (\d+) fails (\d+)/.exec(out);
    t.truthy(m, out);
    if (m === null) return;
    t.is(Number(m[2]), 0, out);
    // 400 elementwise trials (most take the strided kernel), 240 reductions, ~200 unfold and ~300 max pooling geometries.
    t.true(Number(m[1]) > 800, `only ${m[1]} cases checked`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
