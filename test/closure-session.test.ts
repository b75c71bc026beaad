// The two sessions closure reads go through (NOTE [ Closure reads ] in
// lib/jit/closure.ts): Node's connection class, which loads no module, and
// inspector.Session (GPUEXT_CLOSURE_SESSION=inspector, wherever process.binding
// would print a deprecation warning, and where it is missing, throws or gives a
// connection that does not answer at once). Fresh processes read the
// same closed-over values (random numbers, NaN, -0, the infinities, a bigint,
// an object, a gx.jit.device function) and translate the same kernel either
// way; only inspector.Session loads node:inspector.
import test from 'ava';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { bindingDeprecated, closureSession } from '../lib/jit/inspector-session';
import { rng } from './rng';

const LIB = path.join(__dirname, '..', 'lib');
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-closure-session-'));
test.after.always(() => fs.rmSync(DIR, { recursive: true, force: true }));

/** The random inputs every child closes over (one draw for the file). */
const next = rng(20261129);
const INPUTS = { a: (next() - 0.5) * 1e6, b: next() * 1e-3, k: 1 + next(), big: String(BigInt(Math.floor(next() * 2 ** 52)) * 1000003n), o: next() };

/**
 * A fresh process: the values a function defined in a function scope closes
 * over, read through closureValues, each encoded so JSON keeps NaN, -0 and
 * the infinities apart; a rawkernel over some of them translated on the CPU;
 * the session's route and whether node:inspector was loaded.
 */
const CHILD = `
const gx = require(${JSON.stringify(LIB)});
const { closureValues } = require(${JSON.stringify(path.join(LIB, 'jit', 'closure'))});
const { closureSessionRoute } = require(${JSON.stringify(path.join(LIB, 'jit', 'inspector-session'))});
const { deviceInfo } = require(${JSON.stringify(path.join(LIB, 'jit', 'module'))});
const IN = JSON.parse(process.env.GX_INPUTS);
// A Node whose process.binding is gone, refuses, or gives a connection that never answers (GX_BINDING).
const broken = {
  missing: () => undefined,
  throws: () => () => { throw new Error('process.binding is not allowed here'); },
  mute: () => () => ({ Connection: class { dispatch() {} disconnect() { globalThis.gxMuteClosed = true; } } }),
}[process.env.GX_BINDING];
if (broken) process.binding = broken();
(function () {
  const { jit } = gx;
  const a = IN.a, b = IN.b, K = IN.k, nan = NaN, negZero = -0, inf = Infinity, ninf = -Infinity;
  const big = BigInt(IN.big), obj = { o: IN.o, nested: { s: 'x' } }, flag = true, nothing = null;
  const half = jit.device((v) => v * 0.5 + K);
  const f = () => [a, b, K, nan, negZero, inf, ninf, big, obj, flag, nothing, half];
  const names = ['a', 'b', 'K', 'nan', 'negZero', 'inf', 'ninf', 'big', 'obj', 'flag', 'nothing', 'half', 'notThere'];
  const lookup = closureValues(f, names);
  const enc = (v) => typeof v === 'number' ? (Object.is(v, -0) ? 'n-0' : 'n' + String(v))
    : typeof v === 'bigint' ? 'b' + String(v)
    : typeof v === 'function' ? (v === half ? 'half' : 'another function') + (deviceInfo(v) !== undefined ? ' (device)' : '')
    : typeof v === 'object' && v !== null ? (v === obj ? 'obj ' : 'a copy ') + JSON.stringify(v)
    : typeof v + ' ' + JSON.stringify(v);
  const values = {};
  for (const n of names) { const r = lookup(n); values[n] = r.found ? enc(r.value) : 'not found'; }
  const kernel = jit.rawkernel(function scaled(x, y, n) {
    const i = jit.grid(1);
    if (i < n) y[i] = half(x[i]) * a + b;
  });
  const x = gx.ones([4]);
  console.log(JSON.stringify({ values, source: kernel.source(x, x, 4), route: closureSessionRoute(),
    inspectorLoaded: process.moduleLoadList.includes('NativeModule inspector'),
    workerThreadsLoaded: process.moduleLoadList.includes('NativeModule worker_threads'), muteClosed: globalThis.gxMuteClosed === true }));
})();`;

interface ChildOut {
  values: Record<string, string>;
  source: string;
  route: string;
  inspectorLoaded: boolean;
  workerThreadsLoaded: boolean;
  muteClosed: boolean;
}

let dirs = 0;
function child(env: NodeJS.ProcessEnv, execArgv: string[] = []): { out: ChildOut; stderr: string } {
  const cache = path.join(DIR, String(dirs++)); // each child translates, through its own session
  const r = spawnSync(process.execPath, [...execArgv, '-e', CHILD], {
    encoding: 'utf8', env: { ...process.env, GPUEXT_CACHE_DIR: cache, GX_INPUTS: JSON.stringify(INPUTS), ...env }, timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return { out: JSON.parse(r.stdout.trim().split('\n').pop() as string) as ChildOut, stderr: r.stderr };
}

const EXPECTED: Record<string, string> = {
  a: `n${INPUTS.a}`, b: `n${INPUTS.b}`, K: `n${INPUTS.k}`, nan: 'nNaN', negZero: 'n-0', inf: 'nInfinity', ninf: 'n-Infinity',
  big: `b${INPUTS.big}`, obj: `obj ${JSON.stringify({ o: INPUTS.o, nested: { s: 'x' } })}`, flag: 'boolean true', nothing: 'object null',
  half: 'half (device)', notThere: 'not found',
};

const base = { GPUEXT_CLOSURE_SESSION: '', NODE_OPTIONS: '', NODE_PENDING_DEPRECATION: '', GX_BINDING: '' };

test('both sessions read the same closed-over values and translate the same kernel; only inspector.Session loads node:inspector', (t) => {
  const fast = child(base).out;
  const slow = child({ ...base, GPUEXT_CLOSURE_SESSION: 'inspector' }).out;
  t.is(fast.route, 'binding');
  t.is(slow.route, 'inspector');
  t.deepEqual(fast.values, EXPECTED);
  t.deepEqual(slow.values, EXPECTED);
  t.is(fast.source, slow.source);
  t.true(fast.source.includes('gx_jit_scaled'));
  t.false(fast.inspectorLoaded, 'the connection class loads no node:inspector');
  t.false(fast.workerThreadsLoaded, 'nor worker_threads');
  t.true(slow.inspectorLoaded);
  t.true(slow.workerThreadsLoaded);
});

test('under --pending-deprecation (argument, NODE_OPTIONS or NODE_PENDING_DEPRECATION) the read takes inspector.Session and prints no warning', (t) => {
  const runs = [
    child(base, ['--pending-deprecation']),
    child({ ...base, NODE_OPTIONS: '--pending-deprecation' }),
    child({ ...base, NODE_PENDING_DEPRECATION: '1' }),
  ];
  for (const { out, stderr } of runs) {
    t.is(out.route, 'inspector');
    t.deepEqual(out.values, EXPECTED);
    t.notRegex(stderr, /DEP0111|DeprecationWarning/);
  }
});

test('a process.binding that is missing, throws or gives a connection that does not answer at once leaves the read to inspector.Session', (t) => {
  const fast = child(base).out;
  for (const how of ['missing', 'throws', 'mute']) {
    const { out } = child({ ...base, GX_BINDING: how });
    t.is(out.route, 'inspector', how);
    t.deepEqual(out.values, EXPECTED, how);
    t.is(out.source, fast.source, how);
    t.is(out.muteClosed, how === 'mute', `${how}: the connection that did not answer is closed`);
  }
});

test('bindingDeprecated reads the flag wherever Node takes it, and the wrapper util.deprecate puts on process.binding', (t) => {
  const plain = function binding(): void {};
  const wrapped = function deprecated(): void {};
  t.false(bindingDeprecated(plain, [], {}));
  t.true(bindingDeprecated(wrapped, [], {}));
  t.true(bindingDeprecated(plain, ['--pending-deprecation'], {}));
  t.true(bindingDeprecated(plain, ['--pending_deprecation'], {}));
  t.true(bindingDeprecated(plain, [], { NODE_OPTIONS: '--max-old-space-size=100 --pending-deprecation' }));
  t.true(bindingDeprecated(plain, [], { NODE_PENDING_DEPRECATION: '1' }));
  t.false(bindingDeprecated(plain, ['--no-deprecation', '--trace-deprecation'], { NODE_OPTIONS: '--no-pending-deprecation' }));
});

test('a command the inspector refuses gives an Error through the session, and the next command is answered', (t) => {
  let err: Error | null = null;
  closureSession().post('Runtime.noSuchMethod', {}, (e) => {
    err = e;
  });
  t.regex(String(err), /noSuchMethod/);
  let value: unknown;
  closureSession().post('Runtime.evaluate', { expression: '6 * 7' }, (e, r) => {
    value = e === null ? (r.result as { value?: unknown }).value : e;
  });
  t.is(value, 42);
});
