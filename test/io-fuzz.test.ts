// Random damage to .npz, .npy and safetensors files, a new seed each run
// (GPUEXT_FUZZ_SEED replays one, GPUEXT_IO_FUZZ_RUNS sets the count): every
// load must either load, and then inspect to the same names, dtypes and
// shapes, or throw an Error naming gx.loadTensors and the file; the process's
// memory stays bounded. The verdicts are judged against NumPy's on a fixed
// corpus in io-strict.test.ts; this run looks for crashes and hangs.
import test from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { rng } from './rng';

const root = path.resolve(__dirname, '..', '..');
const RUNS = Number(process.env.GPUEXT_IO_FUZZ_RUNS ?? 1500);
const SEED = Number(process.env.GPUEXT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

interface Base {
  ext: string;
  bytes: Buffer;
  /** Where the structure lies (headers, directory): damage goes there half the time. */
  hot: [number, number][];
}

function bases(): Base[] {
  const cases = JSON.parse(fs.readFileSync(path.join(root, 'test/fixtures/io/strict/cases.json'), 'utf8')) as { bases: Record<string, string> };
  const out: Base[] = [];
  for (const b64 of Object.values(cases.bases)) {
    const bytes = Buffer.from(b64, 'base64');
    const cd = bytes.readUInt32LE(bytes.length - 6);
    out.push({ ext: '.npz', bytes, hot: [[cd, bytes.length], [0, 200]] });
  }
  for (const name of ['c_float32.npy', 'fortran_int16_3d.npy', 'big_float32.npy']) {
    const bytes = fs.readFileSync(path.join(root, 'test/fixtures/io', name));
    out.push({ ext: '.npy', bytes, hot: [[0, 128]] });
  }
  const st = fs.readFileSync(path.join(root, 'test/fixtures/io/all_dtypes.safetensors'));
  out.push({ ext: '.safetensors', bytes: st, hot: [[0, 8 + Number(st.readBigUInt64LE(0))]] });
  return out;
}

/** One random damage of `b`, and what it was. */
function damage(b: Base, r: () => number): [Buffer, string] {
  const int = (n: number): number => Math.floor(r() * n);
  const pos = (): number => {
    if (r() < 0.5) {
      const [lo, hi] = b.hot[int(b.hot.length)];
      return lo + int(Math.max(1, Math.min(hi, b.bytes.length) - lo));
    }
    return int(b.bytes.length);
  };
  const out = Buffer.from(b.bytes);
  switch (int(6)) {
    case 0: {
      const at = pos();
      out[at] = int(256);
      return [out, `byte ${at} = ${out[at]}`];
    }
    case 1: {
      // A 16- or 32-bit field set to an edge value.
      const at = Math.min(pos(), out.length - 4);
      const v = [0, 1, 0xffff, 0xffffffff, 0x7fffffff, out.readUInt32LE(at) + 1][int(6)] >>> 0;
      if (r() < 0.5) out.writeUInt16LE(v & 0xffff, at);
      else out.writeUInt32LE(v, at);
      return [out, `field at ${at} = ${v}`];
    }
    case 2: {
      const n = int(out.length);
      return [out.subarray(0, n), `cut to ${n}`];
    }
    case 3: {
      const at = pos(), n = 1 + int(64);
      return [Buffer.concat([out.subarray(0, at), Buffer.from(Array.from({ length: n }, () => int(256))), out.subarray(at)]), `${n} bytes inserted at ${at}`];
    }
    case 4: {
      const at = pos(), n = 1 + int(64);
      return [Buffer.concat([out.subarray(0, at), out.subarray(at + n)]), `${n} bytes removed at ${at}`];
    }
    default: {
      const at = pos(), n = 1 + int(16);
      for (let k = 0; k < n && at + k < out.length; k++) out[at + k] = int(256);
      return [out, `${n} random bytes at ${at}`];
    }
  }
}

test('randomly damaged files load whole (and inspect alike) or throw an Error naming the function and the file', async (t) => {
  t.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-io-fuzz-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const r = rng(SEED);
  const all = bases();
  const rss0 = process.memoryUsage().rss;
  let loaded = 0, refused = 0, worstMs = 0, worst = '';
  const counts: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++) {
    const base = all[Math.floor(r() * all.length)];
    const [bytes, what] = damage(base, r);
    const desc = `run ${i} (${base.ext}: ${what}; replay with GPUEXT_FUZZ_SEED=${SEED})`;
    const file = path.join(dir, `f${base.ext}`);
    fs.writeFileSync(file, bytes);
    counts[base.ext] = (counts[base.ext] ?? 0) + 1;
    const t0 = performance.now();
    try {
      const out = await gx.loadTensors(file);
      loaded++;
      try {
        const info = await gx.inspectTensors(file);
        t.deepEqual(Object.keys(info.tensors).sort(), Object.keys(out).sort(), desc);
        for (const [name, x] of Object.entries(out)) {
          t.deepEqual(info.tensors[name], { dtype: x.dtype, shape: [...x.shape] }, `${desc}: ${name}`);
        }
      } finally {
        for (const x of Object.values(out)) x.dispose();
      }
    } catch (err) {
      refused++;
      if (!(err instanceof Error) || !err.message.startsWith(`gx.loadTensors: ${file}: `)) {
        t.fail(`${desc}: ${err instanceof Error ? `${err.name}: ${err.message}` : `a non-Error ${String(err)}`}`);
      }
    }
    const ms = performance.now() - t0;
    if (ms > worstMs) [worstMs, worst] = [ms, desc];
  }
  const rise = (process.memoryUsage().rss - rss0) / 2 ** 20;
  t.log(`seed ${SEED}: ${RUNS} damaged files (${Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ')}): ` +
    `${loaded} loaded, ${refused} refused with a named error; slowest ${worstMs.toFixed(1)} ms (${worst}); RSS ${rise >= 0 ? '+' : ''}${rise.toFixed(1)} MiB`);
  t.is(loaded + refused, RUNS);
  t.true(rise < 256, `RSS rose ${rise.toFixed(1)} MiB`);
});
