// Convolutions through cuDNN (ops/conv/conv_cudnn.h): the forward, backward
// data and backward filter calls, each recording the others as its
// derivative, and the decision whether cuDNN runs at all.
//
// NOTE [ cuDNN convolutions ]
// On CUDA, gx.nn.functional.conv1d / conv2d run through cuDNN when it loads:
// the unfold + matmul path (NOTE [ Convolution as unfold and matmul ] in
// lib/nn/conv.ts) writes the columns (KH*KW times the input: 1.4 ms of a 2.6
// ms ResNet-stem step on an H200), multiplies, then adds the bias and sums
// its gradient in passes of their own; cuDNN's implicit-GEMM kernels read the
// image in place and fuse the rest, as torch's convolutions do. cuDNN is
// optional, as cuBLAS is (docs/DESIGN.md decision 7): libcudnn.so.9 is
// dlopen-ed at the first CUDA convolution, and the unfold path runs (the CPU
// path too) when
//   - GPUEXT_CUDNN=0, or setCudnnEnabled(false) (tests, benchmarks' A/B);
//   - cuDNN does not load (not installed, not version 9);
//   - cuDNN refuses the configuration (an unsupported dtype or shape, a
//     tensor of 2^31 or more elements, no usable algorithm), or the padding
//     is asymmetric ('same' with an even dilated kernel), which cuDNN's
//     descriptors cannot say.
// NODE_DEBUG=gpuext (or gpuext:conv) says which path runs and why, once per
// reason. float32 runs without TF32 unless gx.setFloat32MatmulPrecision('high')
// allows it (one float32 policy for matmuls and convolutions), so both paths
// agree within float32 rounding. The algorithm of each shape is measured once
// (cudnnFind, torch.backends.cudnn.benchmark = True) or, with
// GPUEXT_CUDNN_BENCHMARK=0, taken from cuDNN's heuristics (torch's default):
// NOTE [ cuDNN algorithms per shape ]. The forward asks, before it runs,
// whether the backward directions the tape will need have an algorithm, so a
// refusal falls back before anything is recorded; the backward data and
// filter ops then cannot be refused.
//
// NOTE [ The bias is gx's ]
// cuDNN convolves; the bias is added and its gradient summed by gx's own
// kernels: y += b in place by gx.add's strided broadcast kernel, and the
// bias gradient is gx.sum(gy, [0, 2, 3]) (the vectorized outer reduction of
// ops/reduce/cuda_reduce.cuh). On an H200, for the ResNet stem's (64, 64,
// 112, 112) output, cudnnAddTensor took 0.207 ms and gx's add 0.140, and
// cudnnConvolutionBackwardBias 0.65 ms (a quarter of the whole step) and
// gx.sum 0.059 (torch's own add and sum: 0.163 and 0.099 ms).
import * as ops from '../../generated/ops';
import { dtypeInfo, type DType } from '../../generated/dtypes';
import { logger } from '../../platform/log';
import { record, requiresGrad, shouldRecord } from '../../tape/graph';
import { noGrad } from '../../tape/mode';
import type { Device } from '../../core/device';
import type { Tensor } from '../../core/tensor';
import { allocate } from '../creation/creation';
import { expand } from '../layout/layout';
import { namedForCaller } from '../library';
import { tf32ByDefault } from '../linalg/matmul';
import { sum } from '../reduce/functions';

/** A convolution's geometry over (height, width), symmetric padding. */
export interface CudnnGeometry {
  padding: readonly [number, number];
  stride: readonly [number, number];
  dilation: readonly [number, number];
  groups: number;
}

const log = logger('conv');
const said = new Set<string>();
/** Logs `line` once per process (NODE_DEBUG=gpuext or gpuext:conv). */
function once(line: string): void {
  if (!log.enabled || said.has(line)) return;
  said.add(line);
  log(line);
}

let enabled = process.env.GPUEXT_CUDNN !== '0';
const benchmark = process.env.GPUEXT_CUDNN_BENCHMARK !== '0';

/**
 * Internal (tests and benchmarks): whether CUDA convolutions may use cuDNN;
 * false runs the unfold + matmul path. Returns the previous setting.
 * GPUEXT_CUDNN=0 starts a process with it off.
 */
export function setCudnnEnabled(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** cuDNN's version once loaded, or why it did not load (asked once per process). */
let loadState: { version: number } | { reason: string } | undefined;

/** cuDNN's version (e.g. 91900) when it loads on `device`, else undefined (the reason logged once). */
export function cudnnVersion(device: Device): number | undefined {
  if (loadState === undefined) {
    try {
      loadState = { version: Number(ops.cudnnVersion('cudnn', { device })) };
      once(`cuDNN ${loadState.version} loaded: CUDA convolutions run through it (NOTE [ cuDNN convolutions ])`);
    } catch (e) {
      loadState = { reason: e instanceof Error ? e.message : String(e) };
    }
  }
  if ('reason' in loadState) {
    once(`CUDA convolutions use unfold + matmul: ${loadState.reason}`);
    return undefined;
  }
  return loadState.version;
}

const allowTf32 = (dtype: DType): boolean => dtype === 'float32' && tf32ByDefault();
/**
 * t as cuDNN reads it: contiguous, starting 16-byte aligned (a view into the
 * middle of a buffer may not: some of cuDNN's kernels load 16 bytes at a time
 * and refuse misaligned pointers). Fresh tensors from the allocator are aligned.
 */
const contiguous = <T extends Tensor>(t: T): T =>
  (t.isContiguous() && (t.storageOffset * dtypeInfo(t.dtype).itemsize) % 16 === 0 ? t : (t.clone() as T));
const args = (g: CudnnGeometry, dtype: DType) => ({
  padding: g.padding, stride: g.stride, dilation: g.dilation, groups: g.groups, allowTf32: allowTf32(dtype), benchmark,
});

/**
 * y = conv(x, w) + b through cuDNN, recorded with its derivative, for x (N,
 * C, H, W) and w (OC, C/groups, KH, KW) on one CUDA device, output grid
 * (OH, OW); undefined when cuDNN is off, does not load, or refuses this
 * configuration (the reason logged once: NOTE [ cuDNN convolutions ]).
 */
export function cudnnConv(x: Tensor, w: Tensor, b: Tensor | null, g: CudnnGeometry, grid: readonly [number, number], fn: string): Tensor | undefined {
  if (!enabled) {
    once('CUDA convolutions use unfold + matmul: cuDNN is switched off (GPUEXT_CUDNN=0 or setCudnnEnabled(false))');
    return undefined;
  }
  if (cudnnVersion(x.device) === undefined) return undefined;
  if (!symmetric(x, w, g, grid)) {
    once(`a CUDA convolution uses unfold + matmul: its padding is not the same on both sides (padding 'same' with an even dilated kernel), which cuDNN cannot take`);
    return undefined;
  }
  const xc = contiguous(x), wc = contiguous(w), bc = b === null ? null : contiguous(b);
  const recording = shouldRecord(xc, wc, bc);
  const needX = recording && requiresGrad(xc), needW = recording && requiresGrad(wc), needB = recording && requiresGrad(bc);
  const y = forward(xc, wc, bc, g, grid, needX, needW, fn);
  if (typeof y === 'string') {
    once(`a CUDA convolution uses unfold + matmul: ${y}`);
    return undefined;
  }
  if (!recording) return y;
  const xShape = xc.shape, wShape = wc.shape;
  // Each gradient needs the other operand only: x is kept for the weight's, w for the input's.
  const save = [...(needW ? [xc] : []), ...(needX ? [wc] : [])];
  return record('conv_cudnn', [xc, wc, bc], y, save, (gy, saved) => {
    const gc = contiguous(gy);
    const sx = needW ? saved[0] : undefined, sw = needX ? saved[needW ? 1 : 0] : undefined;
    return [
      sw === undefined ? null : cudnnConvBackwardInput(gc, sw, xShape, g, fn),
      sx === undefined ? null : cudnnConvBackwardWeight(sx, gc, wShape, g, fn),
      needB ? sum(gc, [0, 2, 3]) : null,  // NOTE [ The bias is gx's ]
    ];
  });
}

/** Whether the grid is the one cuDNN's symmetric padding gives (padding 'same' pads one more after when d (k - 1) is odd). */
function symmetric(x: Tensor, w: Tensor, g: CudnnGeometry, grid: readonly [number, number]): boolean {
  return [0, 1].every((i) => Math.floor((x.shape[2 + i] + 2 * g.padding[i] - g.dilation[i] * (w.shape[2 + i] - 1) - 1) / g.stride[i]) + 1 === grid[i]);
}

/** The native forward: y, or cuDNN's reason for refusing (nothing allocated left behind). */
function forward(x: Tensor, w: Tensor, b: Tensor | null, g: CudnnGeometry, grid: readonly [number, number], checkGradInput: boolean,
  checkGradWeight: boolean, fn: string): Tensor | string {
  const y = allocate([x.shape[0], w.shape[0], grid[0], grid[1]], x.dtype, x.device, undefined, fn);
  try {
    const reason = ops.convCudnn(fn, {
      input: x.handle(fn), weight: w.handle(fn), ...args(g, x.dtype), checkGradInput, checkGradWeight, out: y.handle(fn),
    });
    if (reason !== '') {
      y.dispose();
      return reason;
    }
    if (b !== null) addBias(y, b, fn);
    return y;
  } catch (e) {
    y.dispose();
    throw namedForCaller(e, fn);
  }
}

/** y += b over (N, H, W), in place, by gx's add (NOTE [ The bias is gx's ]); not recorded (the caller records y). */
function addBias(y: Tensor, b: Tensor, fn: string): void {
  const b4 = noGrad(() => b.reshape([1, b.shape[0], 1, 1]));
  try {
    ops.add(fn, { self: y.handle(fn), other: b4.handle(fn), dtype: y.dtype, out: y.handle(fn) });
  } finally {
    b4.dispose();
  }
}

/** conv(x, w) for the derivatives of the backward calls (a refusal here is an error: the forward ran on cuDNN). */
function convAgain(x: Tensor, w: Tensor, g: CudnnGeometry, grid: readonly [number, number], fn: string): Tensor {
  const xc = contiguous(x), wc = contiguous(w);
  const recording = shouldRecord(xc, wc);
  const y = forward(xc, wc, null, g, grid, recording && requiresGrad(xc), recording && requiresGrad(wc), fn);
  if (typeof y === 'string') throw new Error(`${fn}: cuDNN refused the convolution of a higher-order gradient: ${y}`);
  if (!recording) return y;
  const needX = requiresGrad(xc), needW = requiresGrad(wc);
  return record('conv_cudnn', [xc, wc], y, [xc, wc], (gy, [sx, sw]) => {
    const gc = contiguous(gy);
    return [needX ? cudnnConvBackwardInput(gc, sw, sx.shape, g, fn) : null, needW ? cudnnConvBackwardWeight(sx, gc, sw.shape, g, fn) : null];
  });
}

/**
 * dx = the gradient of conv(x, w) with respect to x ((N, C, H, W) =
 * xShape) from gy (N, OC, OH, OW), contiguous; recorded: linear in gy and w.
 */
export function cudnnConvBackwardInput(gy: Tensor, w: Tensor, xShape: readonly number[], g: CudnnGeometry, fn: string): Tensor {
  const dx = allocate(xShape, gy.dtype, gy.device, undefined, fn);
  try {
    ops.convCudnnBackwardInput(fn, { gradOutput: gy.handle(fn), weight: w.handle(fn), ...args(g, gy.dtype), gradInput: dx.handle(fn) });
  } catch (e) {
    dx.dispose();
    throw namedForCaller(e, fn);
  }
  if (!shouldRecord(gy, w)) return dx;
  const needGy = requiresGrad(gy), needW = requiresGrad(w);
  const grid = [gy.shape[2], gy.shape[3]] as const;
  // <gdx, dx(gy, w)> = <conv(gdx, w), gy>: gy's gradient is conv(gdx, w), w's the filter gradient of (gdx, gy).
  return record('conv_cudnn_backward_input', [gy, w], dx, [gy, w], (gdx, [sgy, sw]) => [
    needGy ? convAgain(gdx, sw, g, grid, fn) : null,
    needW ? cudnnConvBackwardWeight(contiguous(gdx), sgy, sw.shape, g, fn) : null,
  ]);
}

/**
 * dw = the gradient of conv(x, w) with respect to w ((OC, C/groups, KH, KW)
 * = wShape) from x and gy, contiguous; recorded: linear in x and gy.
 */
export function cudnnConvBackwardWeight(x: Tensor, gy: Tensor, wShape: readonly number[], g: CudnnGeometry, fn: string): Tensor {
  const dw = allocate(wShape, gy.dtype, gy.device, undefined, fn);
  try {
    ops.convCudnnBackwardWeight(fn, { input: x.handle(fn), gradOutput: gy.handle(fn), ...args(g, gy.dtype), gradWeight: dw.handle(fn) });
  } catch (e) {
    dw.dispose();
    throw namedForCaller(e, fn);
  }
  if (!shouldRecord(x, gy)) return dw;
  const needX = requiresGrad(x), needGy = requiresGrad(gy);
  const grid = [gy.shape[2], gy.shape[3]] as const;
  // <gdw, dw(x, gy)> = <conv(x, gdw), gy>: x's gradient is the input gradient of (gy, gdw), gy's conv(x, gdw).
  return record('conv_cudnn_backward_weight', [x, gy], dw, [x, gy], (gdw, [sx, sgy]) => [
    needX ? cudnnConvBackwardInput(sgy, contiguous(gdw), sx.shape, g, fn) : null,
    needGy ? convAgain(sx, gdw, g, grid, fn) : null,
  ]);
}
