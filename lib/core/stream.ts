// Streams and events: gx.Stream, gx.Event, gx.withStream and stream scopes.
//
// NOTE [ Stream semantics ]
// Each CUDA device has a current stream per thread (csrc/cuda/runtime.h);
// every launch and copy gpuext makes goes on it, so work from one stream runs
// in order and work on different streams may overlap. Making a stream current
// (withStream, use()) affects the calling thread only. Ordering between
// streams is the program's: record an Event on one and waitEvent() on the
// other. Memory used on another stream than the one it was allocated on must
// be declared with tensor.recordStream(stream), or the allocator may hand it
// out again while that stream still reads it.
/// <reference lib="esnext.disposable" preserve="true" />  // NOTE [ Self-sufficient declarations ] in tensor.ts
import { Device, parseDevice, type DeviceLike } from './device';
import { checkDevice } from './gpus';
import { checkOptions, optionKeys } from './options';
import { native, type NativeEvent, type NativeStream } from './native';

function cudaDevice(device: DeviceLike | undefined, fn: string): Device {
  const d = parseDevice(device ?? 'cuda', fn);
  if (d.type !== 'cuda') throw new TypeError(`${fn}: streams and events live on CUDA devices, got '${d}'`);
  checkDevice(d, fn);
  return d;
}

export interface StreamOptions {
  device?: DeviceLike;
  /** Lower numbers run first when both streams have work (CUDA's convention); clamped to the device's range. */
  priority?: number;
  /** No implicit ordering with work on the legacy default stream (stream 0). */
  nonBlocking?: boolean;
}

const STREAM_KEYS = optionKeys<StreamOptions>({ device: true, priority: true, nonBlocking: true });

/** A CUDA stream: an ordered queue of GPU work. */
export class Stream {
  /** @internal */
  readonly native: NativeStream;
  readonly device: Device;

  /**
   * A new stream on a device (the current one by default: gx.cuda.setDevice).
   * @example
   * const s = new gx.Stream({ priority: -1 });
   * gx.withStream(s, () => { c = addGpu(a, b); });
   * await s.done();
   */
  constructor(opts: StreamOptions = {}) {
    opts = checkOptions<StreamOptions>(opts, 'gx.Stream', STREAM_KEYS);
    const device = cudaDevice(opts.device, 'gx.Stream');
    const priority = opts.priority ?? 0;
    if (!Number.isInteger(priority)) throw new TypeError(`gx.Stream: priority must be an integer, got ${String(priority)}`);
    this.native = native.createStream(device.index, Boolean(opts.nonBlocking), priority);
    this.device = device;
  }

  /** @internal Wraps an existing native stream (the current one). */
  static fromNative(s: NativeStream, device: Device): Stream {
    const stream = Object.create(Stream.prototype) as Stream;
    Object.assign(stream, { native: s, device });
    return stream;
  }

  /** The cudaStream_t, for native code. */
  get handle(): bigint {
    return native.streamInfo(this.native).handle;
  }

  /** Blocks until all work queued on the stream has finished. */
  synchronize(): void {
    native.streamSynchronize(this.native);
  }

  /** True when all work queued on the stream has finished. */
  query(): boolean {
    return native.streamQuery(this.native);
  }

  /** Resolves when the work queued so far has finished, without blocking the event loop. */
  done(): Promise<void> {
    const e = new Event({ device: this.device });
    e.record(this);
    return e.done();
  }

  /** Makes later work on this stream wait for `event` (recorded on any stream). */
  waitEvent(event: Event): void {
    if (!(event instanceof Event)) throw new TypeError('Stream.waitEvent: argument \'event\' must be a gx.Event');
    native.streamWaitEvent(this.native, event.native);
  }

  /** Makes later work on this stream wait for everything queued on `other` so far. */
  waitStream(other: Stream): void {
    if (!(other instanceof Stream)) throw new TypeError('Stream.waitStream: argument \'other\' must be a gx.Stream');
    // One event per device, recorded again for each join: a wait takes the event's state when it is queued.
    native.joinStreams(this.native, other.native);
  }

  /**
   * Makes this stream current on its device until the returned scope is
   * disposed: `using _ = stream.use();`.
   */
  use(): Disposable {
    const previous = currentStream(this.device);
    native.setCurrentStream(this.native);
    let restored = false;
    return {
      [Symbol.dispose]: () => {
        if (restored) return;
        restored = true;
        native.setCurrentStream(previous.native);
      },
    };
  }

  toString(): string {
    return `Stream(device='${this.device}', handle=0x${this.handle.toString(16)})`;
  }

  /** [least, greatest] priority on a device; lower numbers run first. */
  static priorityRange(device?: DeviceLike): [number, number] {
    return native.streamPriorityRange(cudaDevice(device, 'Stream.priorityRange').index);
  }
}

/** This thread's current stream on a device (the current device by default). */
export function currentStream(device?: DeviceLike): Stream {
  const d = cudaDevice(device, 'gx.cuda.currentStream');
  return Stream.fromNative(native.currentStream(d.index), d);
}

/**
 * Runs `fn` with `stream` current on its device, then restores the previous
 * current stream, also when `fn` throws. Only the synchronous part of `fn`
 * runs on the stream; for async code, hold `using _ = stream.use()` across it.
 * @example const c = gx.withStream(s, () => addGpu(a, b));
 */
export function withStream<T>(stream: Stream, fn: () => T): T {
  if (!(stream instanceof Stream)) throw new TypeError('gx.withStream: argument \'stream\' must be a gx.Stream');
  using scope = stream.use();
  return fn();
}

export interface EventOptions {
  device?: DeviceLike;
  /** Record timestamps, for elapsedTime() (a little slower to record). */
  timing?: boolean;
  /**
   * Inside a gx.cuda.graph capture, record() and a stream's waitEvent() of
   * this event become event nodes of the graph: each replay records it, or
   * waits for its latest record, as torch.cuda.Event(external=True). So a
   * graph can wait for work queued outside it (another GPU's), or signal
   * that part of it is done. Outside a capture it is an ordinary event.
   */
  external?: boolean;
}

const EVENT_KEYS = optionKeys<EventOptions>({ device: true, timing: true, external: true });

/** A CUDA event: a marker in a stream's work, to wait for or time. */
export class Event {
  /** @internal */
  readonly native: NativeEvent;
  readonly device: Device;
  readonly timing: boolean;
  readonly external: boolean;
  #recorded = false;

  constructor(opts: EventOptions = {}) {
    opts = checkOptions<EventOptions>(opts, 'gx.Event', EVENT_KEYS);
    const device = cudaDevice(opts.device, 'gx.Event');
    this.timing = Boolean(opts.timing);
    this.external = Boolean(opts.external);
    this.native = native.createEvent(device.index, this.timing, this.external);
    this.device = device;
  }

  /** Marks the point reached by the work queued on `stream` (the current stream by default). */
  record(stream?: Stream): this {
    if (stream !== undefined && !(stream instanceof Stream)) throw new TypeError('Event.record: argument \'stream\' must be a gx.Stream');
    // No stream: the core records on the event's device's current stream, with no Stream handle made per record.
    native.recordEvent(this.native, stream?.native);
    this.#recorded = true;
    return this;
  }

  /** Blocks until the recorded work has finished. */
  synchronize(): void {
    native.eventSynchronize(this.native);
  }

  /** True when the recorded work has finished (or nothing was recorded). */
  query(): boolean {
    return native.eventQuery(this.native);
  }

  /** Resolves when the recorded work has finished, without blocking the event loop. */
  done(): Promise<void> {
    return native.eventWait(this.native);
  }

  /** Milliseconds from this event to `end`; both recorded with { timing: true } and completed. */
  elapsedTime(end: Event): number {
    if (!(end instanceof Event)) throw new TypeError('Event.elapsedTime: argument \'end\' must be a gx.Event');
    if (!this.#recorded || !end.#recorded) throw new Error('Event.elapsedTime: both events must be recorded first');
    return native.eventElapsed(this.native, end.native);
  }
}
