// The build lock of an older gpuext (no start time) naming a live process
// (NOTE [ Locks of older versions ] in lib/toolkit/lock.ts): stale at once when
// the process started after the lock was taken, else waited for a bounded
// time, the wait naming the process, then taken over saying why.
import test from 'ava';
import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import { acquireLock, waitMessage, type LockInfo } from '../lib/toolkit/lock';
import { startedAtMs } from '../lib/platform/procinfo';

const linuxTest = process.platform === 'linux' ? test : test.skip;

/** A process that stays alive until killed, started with a recognisable command line. */
function liveProcess(): { pid: number; kill: () => void } {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000) /* unrelated-holder */'], { stdio: 'ignore' });
  if (c.pid === undefined) throw new Error('could not start a process');
  return { pid: c.pid, kill: () => c.kill('SIGKILL') };
}

const dirs: string[] = [];
test.after.always(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function lockFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuext-legacy-lock-'));
  dirs.push(dir);
  return path.join(dir, 'lock');
}

linuxTest('an older lock naming a live process is waited for a bounded time, the wait naming the process, then taken over', async (t) => {
  const holder = liveProcess();
  try {
    // Give /proc a moment, then write the lock as an older gpuext would: after the process started, no start time.
    await new Promise((r) => setTimeout(r, 100));
    const started = startedAtMs(holder.pid);
    t.not(started, undefined);
    const file = lockFile();
    const info: LockInfo = { pid: holder.pid, hostname: os.hostname(), startedAt: new Date((started ?? Date.now()) + 2000).toISOString() };
    fs.writeFileSync(file, JSON.stringify(info));
    let detail: string | undefined, why = '';
    const t0 = Date.now();
    const lock = await acquireLock(file, {
      pollMs: 20, legacyWaitMs: 400,
      onWait: (h, d) => { detail = waitMessage(h, d); },
      onTakeover: (_h, w) => { why = w; },
    });
    const waited = Date.now() - t0;
    t.log(`waited ${waited} ms; wait message: ${detail}; takeover: ${why}`);
    t.true(waited >= 380 && waited < 5000, `waited ${waited} ms`);
    t.regex(detail ?? '', new RegExp(`^waiting for another build \\(pid ${holder.pid}: process ${holder.pid} is '.*unrelated-holder.*'; ` +
      'the lock is of an older gpuext; taken over after 0\\.4 s if still held\\)$'));
    t.regex(why, new RegExp(`the lock is of an older gpuext \\(no start time\\) and names process ${holder.pid} \\('.*unrelated-holder.*'\\), still running after 0\\.\\d s of waiting`));
    lock.release();
    t.false(fs.existsSync(file));
  } finally {
    holder.kill();
  }
});

linuxTest('an older lock taken before its pid\'s process started is stale at once', async (t) => {
  const holder = liveProcess();
  try {
    await new Promise((r) => setTimeout(r, 100));
    const file = lockFile();
    fs.writeFileSync(file, JSON.stringify({ pid: holder.pid, hostname: os.hostname(), startedAt: new Date(Date.now() - 3600_000).toISOString() }));
    let why = '';
    const lock = await acquireLock(file, { onWait: () => t.fail('waited for a stale lock'), onTakeover: (_h, w) => { why = w; } });
    t.regex(why, new RegExp(`process ${holder.pid} started after the lock was taken, so its id now names another process`));
    lock.release();
  } finally {
    holder.kill();
  }
});

test('a current lock (with a start time) of a live process is still waited for without bound', async (t) => {
  const file = lockFile();
  const a = await acquireLock(file);
  let waitedFor = 0;
  let done = false;
  const b = acquireLock(file, { pollMs: 20, legacyWaitMs: 50, onWait: (h) => { waitedFor = h.pid; } }).then((l) => { done = true; return l; });
  await new Promise((r) => setTimeout(r, 300));
  t.false(done, 'not taken over after legacyWaitMs: the lock has a start time');
  t.is(waitedFor, process.pid);
  a.release();
  (await b).release();
});
