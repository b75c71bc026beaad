// The build's lock and its ends: takeover of a dead build's lock, of an old
// one, of one whose id names another process now or comes from an earlier
// boot; a live holder waited for; a build killed by SIGKILL or SIGTERM (its
// compilers end, its temporary files go with the next build); two builds at
// once. The rest of the toolkit is build.test.ts's.

import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { bootId, pidAlive, startTicks } from '../lib/platform/procinfo';
import { build, type BuildEvent } from '../lib/toolkit/build';
import { acquireLock } from '../lib/toolkit/lock';
import { WATCHDOG } from '../lib/toolkit/children';
import { cppProject, root, runCli, tmpdir, write } from './build-helpers';

// --- lock -------------------------------------------------------------------------

test('a lock left by a dead build is taken over', async (t) => {
  const dir = cppProject('deadlock');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  t.truthy(dead);
  write(dir, { 'build/.gpuext/lock': JSON.stringify({ pid: dead, hostname: os.hostname(), startedAt: new Date().toISOString() }) });
  const events: BuildEvent[] = [];
  const r = await build({ config: path.join(dir, 'setup.config.json'), bindings: false, onEvent: (e) => events.push(e) });
  t.true(fs.existsSync(r.outPath));
  const takeover = events.find((e) => e.type === 'takeover');
  t.truthy(takeover);
  t.regex(takeover && takeover.type === 'takeover' ? takeover.why : '', new RegExp(`process ${dead} is gone`));
  t.false(fs.existsSync(path.join(dir, 'build/.gpuext/lock')));
});

test('a lock older than 30 minutes is taken over; a live one is waited for', async (t) => {
  const dir = tmpdir('lock');
  const file = path.join(dir, 'lock');
  fs.writeFileSync(file, JSON.stringify({ pid: process.pid, hostname: 'elsewhere', startedAt: '2020-01-01T00:00:00Z' }));
  const old = new Date(Date.now() - 31 * 60 * 1000);
  fs.utimesSync(file, old, old);
  let why = '';
  const a = await acquireLock(file, { onTakeover: (_h, w) => { why = w; } });
  t.regex(why, /3\d minutes old/);
  let waited = 0;
  const started = Date.now();
  const b = acquireLock(file, { pollMs: 20, onWait: (h) => { waited = h.pid; } });
  setTimeout(() => a.release(), 200);
  const lockB = await b;
  t.is(waited, process.pid, 'printed once who holds it');
  t.true(Date.now() - started >= 150);
  lockB.release();
  t.false(fs.existsSync(file));
});

const linuxTest = process.platform === 'linux' ? test : test.skip;

/** A process that stays alive until killed (a stand-in for a live build). */
function liveProcess(): { pid: number; kill: () => void } {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  if (c.pid === undefined) throw new Error('could not start a process');
  return { pid: c.pid, kill: () => c.kill('SIGKILL') };
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a lock with this process\'s id taken by an earlier process (a restarted container) is taken over at once', async (t) => {
  const dir = tmpdir('ownpid');
  const file = path.join(dir, 'lock');
  const own = startTicks(process.pid);
  const locks = [
    // Written by an earlier node that had the same id (PID 1 in a container, say).
    { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), startTicks: (own ?? 0) + 1000, bootId: bootId() },
    // Written by an older gpuext (no start time): ours only if this process holds it, and it does not.
    { pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() },
  ];
  for (const info of locks) {
    fs.writeFileSync(file, JSON.stringify(info));
    let why = '';
    const started = Date.now();
    const lock = await acquireLock(file, { onTakeover: (_h, w) => { why = w; }, onWait: () => t.fail('waited for a dead lock') });
    t.regex(why, new RegExp(`taken by an earlier process with this process's id \\(${process.pid}\\)`));
    t.true(Date.now() - started < 5000);
    lock.release();
  }
});

linuxTest('a live holder is waited for; an id now naming another process, or from an earlier boot, is not', async (t) => {
  const dir = tmpdir('livepid');
  const file = path.join(dir, 'lock');
  const holder = liveProcess();
  try {
    const ticks = startTicks(holder.pid);
    t.not(ticks, undefined);
    const base = { pid: holder.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), startTicks: ticks, bootId: bootId() };
    for (const [info, re] of [
      [{ ...base, startTicks: (ticks ?? 0) + 12345 }, new RegExp(`process ${holder.pid} has exited and its id now names another process`)],
      [{ ...base, bootId: 'an-earlier-boot' }, new RegExp(`taken by process ${holder.pid} before the machine restarted`)],
    ] as const) {
      fs.writeFileSync(file, JSON.stringify(info));
      let why = '';
      const lock = await acquireLock(file, { onTakeover: (_h, w) => { why = w; }, onWait: () => t.fail('waited for a stale lock') });
      t.regex(why, re);
      lock.release();
    }
    // The same process, still running: waited for until it is gone.
    fs.writeFileSync(file, JSON.stringify(base));
    let waited = 0;
    let why = '';
    let done = false;
    const pending = acquireLock(file, { pollMs: 20, onWait: (h) => { waited = h.pid; }, onTakeover: (_h, w) => { why = w; } })
      .then((l) => { done = true; return l; });
    await new Promise((r) => setTimeout(r, 300));
    t.false(done, 'a live holder is waited for');
    t.is(waited, holder.pid);
    holder.kill();
    const lock = await pending;
    t.regex(why, new RegExp(`process ${holder.pid} is gone`));
    lock.release();
  } finally {
    holder.kill();
  }
});

async function killedBuild(t: ExecutionContext, signal: NodeJS.Signals): Promise<void> {
  const name = `killed_${signal.toLowerCase()}`;
  const dir = cppProject(name);
  const pidsFile = path.join(dir, 'link.pids');
  // A "compiler" that compiles for real but hangs in the link, after creating its output as a linker does,
  // with a child of its own (as g++ runs collect2 and ld).
  write(dir, {
    'tools/cxx': `#!/bin/sh
case " $* " in
  *" -shared "*)
    prev=; for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
    : > "$out"
    sleep 300 &
    echo "$$ $!" > '${pidsFile}'
    wait ;;
  *) exec /usr/bin/g++ "$@" ;;
esac
`,
  });
  fs.chmodSync(path.join(dir, 'tools/cxx'), 0o755);
  const script = `require(${JSON.stringify(path.join(root, 'dist/lib/toolkit/build.js'))})
    .build({ config: 'setup.config.json', bindings: false }).then(() => process.exit(3), () => process.exit(4));`;
  const builder = spawn(process.execPath, ['-e', script], { cwd: dir, env: { ...process.env, CXX: path.join(dir, 'tools/cxx') }, stdio: 'ignore' });
  const exited = new Promise((r) => builder.on('exit', r));
  await until('the link to start', () => fs.existsSync(pidsFile) && fs.readFileSync(pidsFile, 'utf8').trim().split(' ').length === 2);
  const compilers = fs.readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number);
  t.teardown(() => {
    // Should the test fail, leave nothing running.
    for (const pid of [builder.pid ?? 0, ...compilers].filter((p) => p > 0 && pidAlive(p))) process.kill(pid, 'SIGKILL');
  });
  t.true(compilers.every((p) => pidAlive(p)));
  // Killed as soon as the link runs: on a loaded machine, possibly before the builder has told its
  // watchdog of the link's group (NOTE [ Compilers die with the build ]: the environment mark).
  builder.kill(signal);
  await exited;
  // The watchdog is a node process of its own: on a loaded machine it may take seconds to start and act.
  await until('the compilers to end', () => !compilers.some(pidAlive), 30_000).catch(() => undefined);
  t.deepEqual(compilers.filter(pidAlive), [], 'the killed build\'s compiler and its child are gone');
  const leftovers = (): string[] => fs.readdirSync(path.join(dir, 'build')).filter((f) => f.includes('.tmp-'));
  t.is(leftovers().length, 1);
  t.regex(leftovers()[0], new RegExp(`^\\.${name}\\.node\\.tmp-${builder.pid}-`));
  // Temporary files of other dead writers, of an earlier process with our id, and of a live one.
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  write(dir, {
    [`build/.gpuext/.manifest.json.tmp-${dead}-0badf00d`]: '{',
    [`build/.gpuext/obj/tmp-${process.pid}-7.o`]: '',
    [`build/.${name}.js.tmp-${process.ppid}-12345678`]: '',
  });
  const events: BuildEvent[] = [];
  const r = await build({ config: path.join(dir, 'setup.config.json'), bindings: false, onEvent: (e) => events.push(e) });
  t.true(fs.existsSync(r.outPath));
  // SIGTERM runs the lock's handler, which removes the lock; SIGKILL leaves it for the next build to take over.
  if (signal === 'SIGKILL') t.true(events.some((e) => e.type === 'takeover' && e.why.includes(`process ${builder.pid} is gone`)), 'the dead build\'s lock was taken over');
  t.deepEqual(leftovers(), [`.${name}.js.tmp-${process.ppid}-12345678`], 'only the live writer\'s file is kept');
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext')).filter((f) => f.includes('tmp-')), []);
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext/obj')).filter((f) => f.startsWith('tmp-')), []);
}

// The watchdog's environment mark alone (NOTE [ Compilers die with the build ]): a compiler it was never
// told of is stopped with its child when our end of the pipe closes, and left alone after an orderly end.
linuxTest('the watchdog stops an untold compiler that carries its mark, unless retired in order', async (t) => {
  for (const orderly of [false, true]) {
    const dog = spawn(process.execPath, ['-e', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    await new Promise((r) => setTimeout(r, 300));
    const env = { ...process.env, GPUEXT_BUILD_WATCHDOG: String(dog.pid) };
    const tool = spawn('/bin/sh', ['-c', 'sleep 300 & echo "$$ $!"; wait'], { env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const line = await new Promise<string>((r) => tool.stdout.once('data', (d: Buffer) => r(d.toString())));
    const pids = line.trim().split(' ').map(Number);
    t.teardown(() => { for (const p of pids) if (pidAlive(p)) process.kill(p, 'SIGKILL'); });
    dog.stdin?.end(orderly ? '.\n' : '');
    await new Promise((r) => dog.on('exit', r));
    await until('the marked processes to end', () => !pids.some(pidAlive), 10_000).catch(() => undefined);
    if (orderly) t.deepEqual(pids.filter(pidAlive), pids, 'an orderly end stops nothing');
    else t.deepEqual(pids.filter(pidAlive), [], 'the untold compiler and its child are gone');
    for (const p of pids) if (pidAlive(p)) process.kill(p, 'SIGKILL');
  }
});

linuxTest('a build killed with SIGKILL leaves no compiler running, and the next build removes its temporary files', killedBuild, 'SIGKILL');
linuxTest('a build ended by SIGTERM stops its compilers, and the next build removes its temporary files', killedBuild, 'SIGTERM');

test('[core] two builds at once both succeed and the output loads', async (t) => {
  const dir = cppProject('concurrent');
  const [a, b] = await Promise.all([runCli(['build'], dir), runCli(['build'], dir)]);
  t.is(a.code, 0, a.stderr);
  t.is(b.code, 0, b.stderr);
  t.regex(a.stdout + b.stdout, /built build\/concurrent\.node/);
  t.is(a.stdout.trim().split('\n').length, 1, 'quiet outside a terminal: one line');
  const lib = gx.loadLibrary(path.join(dir, 'build/concurrent.node'));
  using x = gx.tensor([1, 2, 3]);
  const y = lib.functions.twice(x);
  t.true(y instanceof gx.Tensor);
  if (y instanceof gx.Tensor) {
    t.deepEqual(Array.from(y.toArraySync()), [2, 4, 6]);
    y.dispose();
  }
  t.deepEqual(fs.readdirSync(path.join(dir, 'build/.gpuext')).sort(), ['extension_main.cpp', 'manifest.json', 'obj']);
});
