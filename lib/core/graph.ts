// CUDA graphs: capture a sequence of launches once, replay it for a fraction
// of the launch cost. See NOTE [ Graph memory ] in csrc/core/capture.h: the
// memory of every tensor made during capture stays allocated (and is reused
// by each replay) until the graph is disposed.
/// <reference lib="esnext.disposable" preserve="true" />  // NOTE [ Self-sufficient declarations ] in tensor.ts
import { whileCapturing } from './capture-guard';
import { checkOptions, optionKeys } from './options';
import { Device, parseDevice, type DeviceLike } from './device';
import { checkDevice } from './gpus';
import { flushDeferred } from './handle-pool';
import { native, type NativeGraph } from './native';
import { Stream, currentStream } from './stream';

/** A captured, instantiated CUDA graph. */
export class CUDAGraph implements Disposable {
  #graph: NativeGraph | null;
  readonly device: Device;
  /** Allocations made during capture, kept alive for replays. */
  readonly keptAllocations: number;
  /** The nodes (kernels, copies, memsets) captured: what one replay launches. */
  readonly nodes: number;

  /** @internal Made by gx.cuda.graph(). */
  constructor(graph: NativeGraph, device: Device, kept: number, nodes: number) {
    this.#graph = graph;
    this.device = device;
    this.keptAllocations = kept;
    this.nodes = nodes;
  }

  /**
   * Runs the captured work again on `stream` (the current stream by default),
   * on the same memory: inputs are read from, and outputs written to, the
   * tensors that were used during capture.
   */
  replay(stream?: Stream): void {
    if (this.#graph === null) throw new Error('CUDAGraph.replay: the graph was disposed');
    // No stream: the core replays on the graph's device's current stream, with no Stream handle made per replay
    // (NOTE [ Graph replay ]).
    native.graphReplay(this.#graph, stream?.native);
  }

  /** Frees the graph and the memory it kept. */
  dispose(): void {
    if (this.#graph === null) throw new Error('CUDAGraph.dispose: the graph was already disposed');
    native.graphDispose(this.#graph);
    this.#graph = null;
  }

  [Symbol.dispose](): void {
    if (this.#graph !== null) this.dispose();
  }
}

const captureStreams = new Map<number, Stream>();

export interface GraphOptions {
  /** The CUDA device whose work is captured (default 'cuda', the current one). */
  device?: DeviceLike;
}

const GRAPH_KEYS = optionKeys<GraphOptions>({ device: true });

/**
 * Captures the GPU work `fn` queues (synchronously) into a CUDA graph. The
 * capture runs on a side stream ordered after the current stream; nothing
 * executes until replay(). Reading results back (toArray, item), copies
 * between host and device and synchronizing are refused inside `fn`
 * (NOTE [ What a capture refuses ] in capture-guard.ts): nothing has run yet.
 * @example
 * const x = gx.zeros([n], { device: 'cuda' });
 * const g = gx.cuda.graph(() => { y = scale(x, 2); });
 * for (let i = 0; i < 100; i++) g.replay();
 */
export function graph(fn: () => void, opts: GraphOptions = {}): CUDAGraph {
  if (typeof fn !== 'function') throw new TypeError('gx.cuda.graph: argument \'fn\' must be a function');
  opts = checkOptions<GraphOptions>(opts, 'gx.cuda.graph', GRAPH_KEYS);
  const device = parseDevice(opts.device ?? 'cuda', 'gx.cuda.graph');
  if (device.type !== 'cuda') throw new TypeError(`gx.cuda.graph: graphs capture CUDA work, got device '${device}'`);
  checkDevice(device, 'gx.cuda.graph');
  let side = captureStreams.get(device.index);
  if (side === undefined) {
    side = new Stream({ device, nonBlocking: true });
    captureStreams.set(device.index, side);
  }
  const current = currentStream(device);
  side.waitStream(current);
  let kept = 0, nodes = 0;
  let handle: NativeGraph;
  {
    using scope = side.use();
    flushDeferred();  // NOTE [ Deferred disposal ]: the capture frees nothing the program disposed before it
    handle = native.beginCapture(side.native);
    let failure: unknown;
    try {
      const r: unknown = whileCapturing(device, fn);
      if (r instanceof Promise) throw new TypeError('gx.cuda.graph: fn must be synchronous (it returned a Promise)');
      flushDeferred();  // and what fn disposed is freed inside the capture, as a disposal at once would have been
    } catch (err) {
      failure = err;
    }
    try {
      [kept, nodes] = native.endCapture(side.native, handle);
    } catch (err) {
      failure ??= err;
    }
    if (failure !== undefined) {
      native.graphDispose(handle);
      throw failure;
    }
  }
  current.waitStream(side);
  return new CUDAGraph(handle, device, kept, nodes);
}
