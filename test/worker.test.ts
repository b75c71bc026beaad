// The addon in worker_threads: several workers load it at once, compute, and
// get correct results; each has its own current stream.
import test from 'ava';
import path from 'path';
import { Worker } from 'worker_threads';

import * as gx from '../lib';
import { deviceTest } from './helpers';

const workerScript = `
const { parentPort, workerData } = require('worker_threads');
const gx = require(workerData.lib);
const { device, seed } = workerData;
const n = 100000;
let sum = 0;
for (let round = 0; round < 20; round++) {
  const a = gx.arange(0, n, 1, { dtype: 'float64', device });
  const b = a.view(100, 1000).contiguous().to('cpu');
  const v = b.toArraySync();
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * seed;
  sum += s;
  a.dispose(); b.dispose();
}
const stream = device === 'cpu' ? null : gx.cuda.currentStream(device).handle.toString();
parentPort.postMessage({ sum, stream, live: gx.memory.stats(device).liveTensors });
`;

function runWorker(device: string, seed: number): Promise<{ sum: number; stream: string | null }> {
  const lib = path.resolve(__dirname, '../lib/index.js');
  return new Promise((resolve, reject) => {
    const w = new Worker(workerScript, { eval: true, workerData: { lib, device, seed } });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`worker exited with ${code}`)); });
  });
}

deviceTest('four workers compute at once with correct results', async (t, device) => {
  const seeds = [1, 2, 3, 4];
  const results = await Promise.all(seeds.map((s) => runWorker(device, s)));
  const base = 20 * ((100000 * 99999) / 2);
  results.forEach((r, i) => t.is(r.sum, base * seeds[i]));
  if (device === 'cuda') {
    const streams = new Set(results.map((r) => r.stream));
    t.is(streams.size, seeds.length, 'each worker has its own current stream');
    t.false(streams.has(gx.cuda.currentStream().handle.toString()), 'and none is the main thread\'s');
  }
});

test('a worker that ends does not disturb tensors on the main thread', async (t) => {
  using keep = gx.tensor([7, 8, 9]);
  await runWorker('cpu', 1);
  t.deepEqual(Array.from(keep.toArraySync()), [7, 8, 9]);
});
