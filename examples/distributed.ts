// Beyond one GPU (`node dist/examples/distributed.js`; the tests call each):
//   - Dask's custom-kernel example: x [4096, 1024] + y [1024] by the
//     add_broadcast_kernel RawKernel on blocks of 1024 x 512, spread over
//     every GPU present (on the CPU, the same kernel written with gx.jit runs
//     on the simulator, at a smaller size);
//   - the SVD article's tall-skinny SVD in row blocks (10000 x 1000 in
//     blocks of 5000 rows), against one SVD of the whole matrix;
//   - data-parallel training with an all-reduce: examples/allreduce-train.ts,
//     started with `npx gpuext run --nproc-per-node 2 dist/examples/allreduce-train.js`.
import * as gx from '../lib';

const { jit } = gx;

/** The article's kernel, as written there. */
export const addBroadcastKernel = new gx.RawKernel(`
extern "C" __global__
void add_broadcast_kernel(const float* x, const float* y, float* z, const int dim0)
{
    int idx0 = blockIdx.x * blockDim.x + threadIdx.x;
    int idx1 = blockIdx.y * blockDim.y + threadIdx.y;
    z[idx1 * dim0 + idx0] = x[idx1 * dim0 + idx0] + y[idx0];
}`, 'add_broadcast_kernel');

/** The same kernel in TypeScript, which the CPU runs on the simulator. */
export const addBroadcastJit = jit.rawkernel(function add_broadcast_kernel(x: gx.jit.Array, y: gx.jit.Array, z: gx.jit.Array, dim0: number) {
  const idx0 = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x;
  const idx1 = jit.blockIdx.y * jit.blockDim.y + jit.threadIdx.y;
  z[idx1 * dim0 + idx0] = x[idx1 * dim0 + idx0] + y[idx0];
});

/** The article's dispatch_add_broadcast: a 32 x 32 block, one thread per element of the block of x. */
export function dispatchAddBroadcast(x: gx.Tensor, y: gx.Tensor, z: gx.Tensor): gx.Tensor {
  const block: [number, number] = [32, 32];
  const grid: [number, number] = [x.shape[1] / block[1], x.shape[0] / block[0]];
  const dim0 = x.strides[0] / x.strides[1];
  if (x.device.type === 'cuda') {
    addBroadcastKernel.launch(grid, block, [x, y, z, dim0]);
  } else {
    // The CUDA kernel sees raw pointers; a jit kernel indexes tensors by their dimensions: give it the flat blocks.
    using xf = x.reshape(-1);
    using zf = z.reshape(-1);
    addBroadcastJit(grid, block, [xf, y, zf, dim0]);
  }
  return z;
}

/**
 * The same dispatch as a mapBlocks launch plan (CUDA blocks only; NOTE [ Block launch plans ]): checked on the first
 * block of each device, kept when the plan is passed again. Arguments: the blocks of x, y and z.
 */
export const addBroadcastPlan: gx.BlockLaunch = {
  kernel: addBroadcastKernel, block: [32, 32], out: 2,
  grid: (x: gx.Tensor) => [x.shape[1] / 32, x.shape[0] / 32],
  args: (x: gx.Tensor, y: gx.Tensor, z: gx.Tensor) => [x, y, z, x.strides[0] / x.strides[1]],
};

/** The devices blocks go to: every GPU present, else the CPU. */
export function allDevices(): string[] {
  const n = gx.cuda.isAvailable() ? gx.cuda.deviceCount() : 0;
  return n === 0 ? ['cpu'] : Array.from({ length: n }, (_, i) => `cuda:${i}`);
}

/** x + y by mapBlocks over `devices`; the largest difference from the unchunked x + y. */
export function addBroadcastExample(devices: readonly string[], rows = 4096, cols = 1024, chunks: [number, number] = [1024, 512]): { maxError: number; blocks: number; devices: string[] } {
  return gx.tidy(() => {
    const x = gx.arange(rows * cols, { dtype: 'float32', device: devices[0] }).reshape(rows, cols);
    const y = gx.arange(cols, { dtype: 'float32', device: devices[0] });
    const z = gx.full([rows, cols], -1, { device: devices[0] });  // poisoned: an unwritten element shows
    using dx = gx.chunked(x, { chunks, devices });
    using dy = gx.chunked(y, { chunks: [chunks[1]], devices });
    using dz = gx.chunked(z, { chunks, devices });
    using res = gx.mapBlocks(dispatchAddBroadcast, dx, dy, dz, { dtype: 'float32' });
    const got = res.compute(devices[0]);
    const want = gx.add(x, y);
    return {
      maxError: gx.max(gx.abs(gx.sub(got, want))).item() as number,
      blocks: res.blocks.length,
      devices: [...new Set(res.devices.map(String))],
    };
  });
}

/** The tall-skinny SVD in row blocks against one SVD: reconstruction errors and the largest singular-value difference. */
export function chunkedSvdExample(devices: readonly string[], rows = 10_000, cols = 1000, blockRows = 5000):
  { chunkedError: number; singleError: number; maxSingularValueDiff: number } {
  return gx.tidy(() => {
    gx.manualSeed(11);
    const a = gx.randn([rows, cols], { dtype: 'float64', device: devices[0] });
    using ca = gx.chunked(a, { chunks: [blockRows, cols], devices });
    const { U, S, Vh } = ca.svd();
    using u = U;
    const rel = (uu: gx.Tensor, s: gx.Tensor, vh: gx.Tensor): number => {
      const r = gx.matmul(uu.mul(s.reshape(1, -1)), vh);
      return (gx.max(gx.abs(gx.sub(r, a))).item() as number) / (gx.max(gx.abs(a)).item() as number);
    };
    const one = gx.linalg.svd(a, { fullMatrices: false });
    return {
      chunkedError: rel(u.compute(devices[0]), S, Vh),
      singleError: rel(one.U, one.S, one.Vh),
      maxSingularValueDiff: (gx.max(gx.abs(gx.sub(S, one.S))).item() as number) / (one.S.toArraySync()[0] as number),
    };
  });
}

if (require.main === module) {
  const devices = allDevices();
  const small = devices[0] === 'cpu';
  console.log('add_broadcast by mapBlocks:', addBroadcastExample(devices, small ? 256 : 4096, small ? 128 : 1024, small ? [64, 64] : [1024, 512]));
  console.log('chunked SVD:', chunkedSvdExample(devices, small ? 2000 : 10_000, small ? 50 : 1000, small ? 500 : 5000));
}
