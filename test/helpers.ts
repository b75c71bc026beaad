// Shared test helpers: run a test on every device, random reference data,
// poisoning. On a machine without a GPU the CUDA cases are skipped (and say
// why); with GPUEXT_REQUIRE_CUDA=1 a missing GPU fails them instead.
import test, { type ExecutionContext } from 'ava';

import * as gx from '../lib';
import { rng } from './rng';
import { encodeBFloat16, decodeBFloat16, encodeFloat16, decodeFloat16 } from '../lib/core/half';

export const REQUIRE_CUDA = process.env.GPUEXT_REQUIRE_CUDA === '1';
export const DEVICES = ['cpu', 'cuda'] as const;
export type TestDevice = (typeof DEVICES)[number];

type Body = (t: ExecutionContext, device: TestDevice) => void | Promise<void>;

function register(kind: 'concurrent' | 'serial', title: string, body: Body, devices: readonly TestDevice[] = DEVICES): void {
  const run = kind === 'serial' ? test.serial : test;
  for (const device of devices) {
    const name = `${title} [${device}]`;
    if (device === 'cuda' && !gx.cuda.isAvailable()) {
      const reason = gx.cuda.unavailableReason();
      if (REQUIRE_CUDA) {
        run(name, (t) => t.fail(`GPUEXT_REQUIRE_CUDA=1 but CUDA is unavailable: ${reason}`));
      } else {
        run.skip(`${name} (skipped: ${reason})`, () => undefined);
      }
      continue;
    }
    run(name, (t) => body(t, device));
  }
}

/** A test that runs once per device (cpu, cuda). */
export function deviceTest(title: string, body: Body): void {
  register('concurrent', title, body);
}

/**
 * A test that only means something with a GPU (skipped without one, like the
 * cuda cases). `serial` for tests that time things or block the event loop.
 */
export function cudaTest(title: string, body: (t: ExecutionContext) => void | Promise<void>, opts: { serial?: boolean } = {}): void {
  register(opts.serial ? 'serial' : 'concurrent', title, (t) => body(t), ['cuda']);
}

/** deviceTest for tests that read global counters and must not overlap others (on `devices`, default all). */
export function deviceTestSerial(title: string, body: Body, devices: readonly TestDevice[] = DEVICES): void {
  register('serial', title, body, devices);
}

export { rng } from './rng';

/**
 * n random values exactly representable in `dtype`, never all zero, in the
 * array type toArray() returns for it.
 */
export function randomValues(dtype: gx.DType, n: number, seed = 1): gx.ValueArrayMap[gx.DType] {
  const r = rng(seed);
  switch (dtype) {
    case 'float32': return Float32Array.from({ length: n }, () => (r() - 0.5) * 200);
    case 'float64': return Float64Array.from({ length: n }, () => (r() - 0.5) * 2e6);
    case 'float16':
    case 'bfloat16': {
      const raw = Float64Array.from({ length: n }, () => (r() - 0.5) * 100);
      const bits = new Uint16Array(n);
      const out = new Float32Array(n);
      if (dtype === 'float16') { encodeFloat16(raw, bits); decodeFloat16(bits, out); }
      else { encodeBFloat16(raw, bits); decodeBFloat16(bits, out); }
      return out;
    }
    case 'int8': return Int8Array.from({ length: n }, () => Math.floor(r() * 256) - 128);
    case 'int16': return Int16Array.from({ length: n }, () => Math.floor(r() * 65536) - 32768);
    case 'int32': return Int32Array.from({ length: n }, () => Math.floor(r() * 4294967296) - 2147483648);
    case 'int64': return BigInt64Array.from({ length: n }, () =>
      BigInt.asIntN(64, (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32))));
    case 'uint8': return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
    case 'bool': return Uint8Array.from({ length: n }, (_, i) => (i === 0 ? 1 : r() < 0.5 ? 1 : 0));
  }
}

/** A value for poisoning outputs: never what a correct result holds in these tests. */
export function poisonOf(dtype: gx.DType): number | bigint | boolean {
  if (dtype === 'int64') return -7777777777n;
  if (dtype === 'bool') return true;
  if (dtype === 'uint8') return 251;
  if (dtype === 'int8') return -111;
  return dtype.startsWith('float') || dtype === 'bfloat16' ? Number.NaN : -31111;
}

/**
 * Leaves a freed, poisoned block of `numel` elements in the allocator's cache
 * so the next tensor of that size on `device` likely reuses poisoned memory:
 * elements a creation function fails to write then show.
 */
export function poisonCache(device: TestDevice, numel: number, dtype: gx.DType): void {
  const t = gx.full([numel], poisonOf(dtype), { dtype, device });
  t.dispose();
}

/** Element-wise equality of two value arrays, NaN equal to NaN. */
export function sameValues(t: ExecutionContext, actual: ArrayLike<number | bigint>, expected: ArrayLike<number | bigint>, what = ''): void {
  t.is(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (a !== e && !(Number.isNaN(a) && Number.isNaN(e))) {
      t.fail(`${what} element ${i}: got ${String(a)}, expected ${String(e)}`);
      return;
    }
  }
  t.pass();
}

export type ErrorClass = typeof TypeError | typeof RangeError | typeof Error;

/** Asserts fn throws `cls` with a message matching `re`, and another tensor on `device` is intact. */
export function rejects(t: ExecutionContext, device: TestDevice, fn: () => unknown, cls: ErrorClass, re: RegExp): void {
  using sentinel = gx.tensor([1.5, -2, 3], { device });
  const err = t.throws(fn);
  t.true(err instanceof cls, `expected ${cls.name}, got ${err?.constructor.name}: ${err?.message}`);
  t.regex(err?.message ?? '', re);
  sameValues(t, sentinel.toArraySync(), [1.5, -2, 3], 'other tensors intact');
}

/**
 * Keeps a stream busy for `ms` milliseconds (one thread sleeping on the GPU's
 * clock): `stream`, or the current stream of the current device.
 */
export function occupyStream(ms: number, stream?: gx.Stream): void {
  const k = new gx.RawKernel(`
extern "C" __global__ void occupy(int ms) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(100000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < 1000000ull * ms);
}`, 'occupy');
  k.launch([1], [1], [ms], stream === undefined ? undefined : { stream });
}
