// cuDNN convolutions (NOTE [ cuDNN convolutions ] in lib/ops/conv/cudnn.ts)
// on CUDA against the unfold + matmul path they fall back to: outputs and the
// gradients of x, w and b for conv2d / conv1d with stride, padding, dilation,
// groups (depthwise too), unbatched inputs, in float64, float32 (TF32 off: a
// float64 reference catches TF32's 10-bit products) and the 16-bit floats,
// views that start misaligned;
// gradcheck of the recorded derivatives, second order included; the
// fallback's rules. Then, where cuDNN's headers are on the machine, a compile
// check that ops/conv/cudnn_api.h declares cuDNN's values, struct layouts and
// prototypes (test/fixtures/cudnn_api_check.cpp); skipped where they are not.
// The CUDA cases are skipped without a GPU; cuDNN not loading on a GPU
// machine is a failure with GPUEXT_REQUIRE_CUDA=1 (GPUEXT_REQUIRE_CUDNN=0
// accepts it) or GPUEXT_REQUIRE_CUDNN=1.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import * as gx from '../lib';
import { cudnnConv, cudnnVersion, setCudnnEnabled } from '../lib/ops/conv/cudnn';
import { cudaTest, REQUIRE_CUDA, rng } from './helpers';
import { close, values } from './nn-helpers';

const F = gx.nn.functional;

/** Uniform values in [-1, 1) of `dtype` on CUDA that require grad. */
function R(shape: number[], seed: number, dtype: gx.DType = 'float64'): gx.Tensor {
  const r = rng(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  using flat = gx.tensor(Array.from({ length: n }, () => 2 * r() - 1), { dtype, device: 'cuda' });
  return flat.reshape(shape).requiresGrad_();
}

interface Case { x: number[]; w: number[]; bias: boolean; opts: gx.nn.ConvOptions }
const CASES: Record<string, Case> = {
  'basic, padding 1': { x: [2, 3, 9, 8], w: [5, 3, 3, 3], bias: true, opts: { padding: 1 } },
  'stride, padding and dilation per dim': { x: [3, 4, 11, 10], w: [6, 4, 3, 2], bias: true, opts: { stride: [2, 1], padding: [2, 1], dilation: [1, 2] } },
  'groups': { x: [2, 6, 8, 7], w: [9, 2, 3, 3], bias: true, opts: { groups: 3, stride: 2, padding: 1 } },
  'depthwise, padding same': { x: [2, 4, 7, 7], w: [4, 1, 3, 3], bias: false, opts: { groups: 4, padding: 'same' } },
  'a small ResNet stem': { x: [2, 3, 32, 30], w: [8, 3, 7, 7], bias: true, opts: { stride: 2, padding: 3 } },
  'unbatched': { x: [3, 7, 8], w: [4, 3, 3, 2], bias: false, opts: { padding: 'valid' } },
  'conv1d': { x: [2, 3, 17], w: [5, 3, 4], bias: true, opts: { stride: 2, padding: 2, dilation: 2 } },
  'conv1d, padding same with an even kernel (asymmetric: the fallback)': { x: [2, 3, 9], w: [6, 1, 4], bias: false, opts: { padding: 'same', groups: 3 } },
};

/** y and the gradients of sum(y * gy) with respect to x, w (and b), through the path `cudnn` picks. */
function run(c: Case, seed: number, dtype: gx.DType, cudnn: boolean): number[][] {
  const was = setCudnnEnabled(cudnn);
  try {
    return gx.tidy(() => {
      const xs = [R(c.x, seed, dtype), R(c.w, seed + 1, dtype), ...(c.bias ? [R([c.w[0]], seed + 2, dtype)] : [])];
      const conv = c.w.length === 3 ? F.conv1d : F.conv2d;
      const y = conv(xs[0], xs[1], c.bias ? xs[2] : null, c.opts);
      const gy = R([...y.shape], seed + 3, dtype).detach();
      gx.sum(gx.mul(y, gy).astype('float64')).backward();
      return [y, ...xs.map((x) => x.grad as gx.Tensor)].map((v) => values(v.astype('float64')));
    });
  } finally {
    setCudnnEnabled(was);
  }
}

// cuDNN is required where CUDA is (GPUEXT_REQUIRE_CUDA=1: the GPU machine has it) unless GPUEXT_REQUIRE_CUDNN=0.
const REQUIRE_CUDNN = process.env.GPUEXT_REQUIRE_CUDNN === '1' || (REQUIRE_CUDA && process.env.GPUEXT_REQUIRE_CUDNN !== '0');

/** Whether cuDNN loads here; when it does not, a failure where it is required, else a logged pass. */
function loaded(t: ExecutionContext): boolean {
  if (cudnnVersion(new gx.Device('cuda')) !== undefined) return true;
  if (REQUIRE_CUDNN) t.fail('cuDNN did not load (NODE_DEBUG=gpuext:conv says why; GPUEXT_REQUIRE_CUDNN=0 accepts its absence)');
  else t.log('cuDNN did not load: only the fallback ran');
  t.pass();
  return false;
}

const NAMES = ['y', 'dx', 'dw', 'db'];

cudaTest('cuDNN and the unfold path agree: outputs and gradients, float64 and float32', (t) => {
  if (!loaded(t)) return;
  const live = gx.memory.stats('cuda').liveTensors;
  let seed = 100;
  for (const [name, c] of Object.entries(CASES)) {
    for (const [dtype, atol, rtol] of [['float64', 1e-12, 1e-12], ['float32', 1e-4, 1e-4]] as const) {
      seed += 10;
      const ours = run(c, seed, dtype, true), fallback = run(c, seed, dtype, false);
      ours.forEach((v, i) => close(t, v, fallback[i], `${name} ${dtype}: ${NAMES[i]}`, atol, rtol));
    }
  }
  t.is(gx.memory.stats('cuda').liveTensors, live, 'no tensor left behind');
});

cudaTest('float16 and bfloat16 through cuDNN compute in float: within a rounding of the float64 result', (t) => {
  if (!loaded(t)) return;
  let seed = 300;
  for (const name of ['basic, padding 1', 'groups', 'conv1d']) {
    const c = CASES[name];
    for (const [dtype, tol] of [['float16', 2e-2], ['bfloat16', 1.5e-1]] as const) {
      seed += 10;
      const ours = run(c, seed, dtype, true), exact = run(c, seed, 'float64', false);
      ours.forEach((v, i) => close(t, v, exact[i], `${name} ${dtype}: ${NAMES[i]}`, tol, 2e-2));
    }
  }
});

cudaTest('a contiguous view starting at an odd element (misaligned for cuDNN\'s 16-byte loads) gives its copy\'s result', (t) => {
  if (!loaded(t)) return;
  gx.tidy(() => {
    for (const dtype of ['float16', 'float32'] as const) {
      const n = 2 * 3 * 9 * 8;
      const x = gx.narrow(R([n + 1], 351, dtype), 0, 1, n).reshape([2, 3, 9, 8]);
      t.is(x.storageOffset, 1);
      const w = R([5, 3, 3, 3], 352, dtype), b = R([5], 353, dtype);
      const y = F.conv2d(x, w, b, { padding: 1 });
      const want = F.conv2d(x.clone(), w, b, { padding: 1 });
      close(t, values(y.astype('float64')), values(want.astype('float64')), `${dtype} output`, 0, 0);
      gx.sum(gx.mul(y, y).astype('float64')).backward();
      t.truthy(w.grad, `${dtype}: the gradient reaches the weight`);
    }
  });
});

cudaTest('float32 runs without TF32 by default: a 576-term convolution within float32 rounding of float64', (t) => {
  if (!loaded(t)) return;
  gx.tidy(() => {
    const x = R([4, 64, 12, 12], 401), w = R([32, 64, 3, 3], 402);
    const exact = values(F.conv2d(x, w, null, { padding: 1 }));
    const f32 = values(F.conv2d(x.astype('float32'), w.astype('float32'), null, { padding: 1 }).astype('float64'));
    // Terms of size ~1/3 summed 576 times: float32 errs by ~1e-6, TF32 (10-bit mantissas) by ~1e-2.
    close(t, f32, exact, 'float32 conv2d', 2e-4, 0);
  });
});

cudaTest('cuDNN runs (the direct call gives a tensor) and F.conv2d takes it; switched off or asymmetric, it steps aside', (t) => {
  if (!loaded(t)) return;
  gx.tidy(() => {
    const x = R([2, 3, 10, 9], 501).detach(), w = R([4, 3, 3, 3], 502).detach(), b = R([4], 503).detach();
    const g = { padding: [1, 1], stride: [2, 1], dilation: [1, 1], groups: 1 } as const;
    const direct = cudnnConv(x, w, b, g, [5, 9], 'test');
    if (direct === undefined) {
      t.fail('cuDNN loaded but refused a plain float64 convolution');
      return;
    }
    close(t, values(direct), values(F.conv2d(x, w, b, { padding: 1, stride: [2, 1] })), 'direct call vs F.conv2d', 1e-14, 1e-14);
    t.is(cudnnConv(x, w, b, g, [5, 8], 'test'), undefined, 'a grid that symmetric padding does not give');
    const was = setCudnnEnabled(false);
    try {
      t.is(cudnnConv(x, w, b, g, [5, 9], 'test'), undefined, 'switched off');
    } finally {
      setCudnnEnabled(was);
    }
  });
});

cudaTest('gradcheck through cuDNN (float64): first and second order', (t) => {
  if (!loaded(t)) return;
  gx.tidy(() => {
    const x = R([2, 4, 6, 5], 601), w = R([6, 2, 3, 2], 602), b = R([6], 603);
    const conv = (v: gx.Tensor, u: gx.Tensor, e: gx.Tensor): gx.Tensor => F.conv2d(v, u, e, { groups: 2, stride: [2, 1], padding: [1, 0], dilation: [1, 2] });
    const first = gx.autograd.gradcheck(conv, [x, w, b], { raiseException: false });
    t.true(first.ok, `first order: ${JSON.stringify(first.worst)}`);
    // The gradients as functions of (x, w, b, gy): each backward call differentiated through its own record.
    const gy = R([2, 6, 3, 3], 604);
    const grads = (v: gx.Tensor, u: gx.Tensor, e: gx.Tensor, g: gx.Tensor): gx.Tensor => {
      const [, gs] = gx.autograd.functional.vjp((...xs: gx.Tensor[]) => conv(xs[0], xs[1], xs[2]), [v, u, e], g, { createGraph: true });
      return gx.cat([...gs].map((q) => q.reshape([-1])));
    };
    const second = gx.autograd.gradcheck(grads, [x, w, b, gy], { raiseException: false });
    t.true(second.ok, `second order: ${JSON.stringify(second.worst)}`);
  });
});

// ---- the declarations of ops/conv/cudnn_api.h against cuDNN's own headers, where a machine has them.

/** The first folder holding cudnn.h: the system's, the CUDA toolkit's, or a pip install's (torch's). */
function cudnnInclude(): string | undefined {
  const dirs = [
    ...(process.env.GPUEXT_CUDNN_INCLUDE ? [process.env.GPUEXT_CUDNN_INCLUDE] : []),
    '/usr/include', '/usr/include/x86_64-linux-gnu', '/usr/include/aarch64-linux-gnu', '/usr/local/cuda/include',
    '/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/include',  // torch's pip cuDNN on the GPU machine
  ];
  return dirs.find((d) => fs.existsSync(path.join(d, 'cudnn.h')) && fs.existsSync(path.join(d, 'cudnn_cnn.h')));
}

/** The folder holding cuda_runtime.h (cudnn_api.h includes it). */
function cudaInclude(): string | undefined {
  const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter((h): h is string => !!h);
  return homes.map((h) => path.join(h, 'include')).find((d) => fs.existsSync(path.join(d, 'cuda_runtime.h')));
}

const headers = cudnnInclude(), cudaHeaders = cudaInclude();
const compiler = ['g++', 'c++'].find((c) => {
  try {
    execFileSync(c, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});
const why = headers === undefined ? 'no cudnn.h on this machine' : cudaHeaders === undefined ? 'no cuda_runtime.h' : 'no C++ compiler';
(headers !== undefined && cudaHeaders !== undefined && compiler !== undefined ? test : test.skip)(
  `ops/conv/cudnn_api.h matches cuDNN's headers (values, struct layout, prototypes)${headers === undefined || cudaHeaders === undefined || compiler === undefined ? ` (skipped: ${why})` : ''}`,
  (t) => {
    const root = path.resolve(__dirname, '..', '..');
    const check = path.join(root, 'test', 'fixtures', 'cudnn_api_check.cpp');
    const args = ['-std=c++17', '-fsyntax-only', '-Wno-deprecated-declarations', `-I${headers}`, `-I${cudaHeaders}`, `-I${path.join(root, 'ops', 'conv')}`, check];
    try {
      execFileSync(compiler as string, args, { stdio: 'pipe' });
      t.pass();
    } catch (e) {
      const err = e as { stderr?: Buffer };
      t.fail(`${compiler} ${args.join(' ')}:\n${String(err.stderr ?? e).slice(0, 4000)}`);
    }
  },
);
