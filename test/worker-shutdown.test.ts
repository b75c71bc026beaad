// Stopping a worker (or the process) while the worker is inside gx calls must
// not take the process down: N-API cannot throw into JS while a thread is
// being stopped, and node-addon-api once turned that into an uncaught C++
// exception and an abort (exit 134). Each case runs in a child process,
// whose exit code and output are checked, on every device.
import test from 'ava';
import { spawnSync } from 'child_process';
import path from 'path';

import { deviceTest, REQUIRE_CUDA } from './helpers';

const lib = path.resolve(__dirname, '../lib/index.js');

/** A script that starts workers running `body` in a loop and stops them as `mode` says, `rounds` times. */
function script(mode: 'terminate' | 'exit' | 'require', device: string, rounds: number): string {
  const body = mode === 'require'
    ? `require('worker_threads').parentPort.postMessage(0); require(${JSON.stringify(lib)});`
    : `const gx = require(${JSON.stringify(lib)}); const t = gx.zeros([64], { device: ${JSON.stringify(device)} });
       const u = gx.ones([64], { device: ${JSON.stringify(device)} });
       require('worker_threads').parentPort.postMessage(0);
       for (;;) { t.fill_(1); gx.add(t, u, { out: t }); t.sum().dispose(); }`;
  return `
const { Worker } = require('worker_threads');
let done = 0;
function one() {
  const w = new Worker(${JSON.stringify(body)}, { eval: true });
  w.on('error', (e) => { console.log('worker error: ' + e.message); });
  w.once('message', () => setTimeout(() => {
    if (${JSON.stringify(mode)} === 'exit') process.exit(0);
    w.terminate().then(() => { if (++done < ${rounds}) one(); else console.log('stopped ' + done); });
  }, ${mode === 'require' ? 0 : 10}));
}
one();`;
}

function run(mode: 'terminate' | 'exit' | 'require', device: string, rounds: number): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['-e', script(mode, device, rounds)], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

// On the GPU machine (GPUEXT_REQUIRE_CUDA=1) the CUDA case is repeated 100 times, with kernels in flight.
deviceTest('terminating a worker inside gx calls leaves the process running', (t, device) => {
  const rounds = device === 'cuda' && REQUIRE_CUDA ? 100 : 10;
  const r = run('terminate', device, rounds);
  t.is(r.status, 0, r.output);
  t.regex(r.output, new RegExp(`stopped ${rounds}`));
  t.notRegex(r.output, /terminate called|Napi::Error|FATAL/);
});

deviceTest('process.exit while a worker is inside gx calls exits cleanly', (t, device) => {
  const r = run('exit', device, 1);
  t.is(r.status, 0, r.output);
  t.notRegex(r.output, /terminate called|Napi::Error|FATAL/);
});

test('terminating a worker while it loads gpuext leaves the process running', (t) => {
  const r = run('require', 'cpu', 10);
  t.is(r.status, 0, r.output);
  t.regex(r.output, /stopped 10/);
  t.notRegex(r.output, /terminate called|Napi::Error|FATAL/);
});
