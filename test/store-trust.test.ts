// Rank 0's store against clients that are not its job's: a live job of two
// ranks (`gpuext run`, rank 0's store in its own process) runs allReduces
// while this file sends it random and hostile frames and connections:
// random bytes, huge length prefixes, bad JSON, null headers, wrong key
// types, requests before the handshake, wrong and replayed proofs, slow
// senders, a flood of silent connections, forged collective keys, and
// mutated requests from a client that holds the secret. It counts: 0 server
// exits, every hostile client refused, every collective right. Also: where
// the store listens (the loopback for one node, checked from the socket),
// and that the wire's reader refuses a 4 GiB length prefix at once and reads
// a trickled payload in linear time.
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { freePort } from '../lib/cli/run';
import { placementFromEnv } from '../lib/distributed/env';
import { createProcessGroup } from '../lib/distributed/group';
import { StoreClient } from '../lib/distributed/store';
import { bindAddress, nonce, proof } from '../lib/distributed/trust';
import { FrameReader, frame, type Header } from '../lib/distributed/wire';
import { rng } from './rng';
import { RawConn, rawFrame, type Outcome } from './store-hostile';

const LIB = path.resolve(__dirname, '../lib');
const CLI = path.resolve(__dirname, '../lib/cli/main.js');
/** The job's store limits (small, so that the deadlines pass quickly). */
const LIMITS = { maxHeaderBytes: 4096, maxPayloadBytes: 65536, authTimeoutMs: 500, frameTimeoutMs: 1000 };
/** Connections of mutated requests from members. */
const MUTATED = 200;
/** How long past a deadline the server may take to close (2 busy cores). */
const SLACK = 1500;

/** The ranks' script: allReduces of known values until the stop file appears, then how many came out wrong. */
function rankScript(stop: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-store-'));
  const file = path.join(dir, 'rank.js');
  fs.writeFileSync(file, `const gx = require(${JSON.stringify(LIB)});
const fs = require('fs');
const value = (round, rank, i) => ((round * 7919 + rank * 104729 + i * 7907 + 13) % 2001) - 1000;
(async () => {
  const g = await gx.distributed.initProcessGroup({ timeoutMs: 30000, store: ${JSON.stringify(LIMITS)} });
  if (g.rank === 0) console.log(JSON.stringify({ ready: true, address: g.storeAddress }));
  let rounds = 0, wrong = 0;
  for (;;) {
    const flag = gx.tensor([g.rank === 0 && fs.existsSync(${JSON.stringify(stop)}) ? 1 : 0]);
    await g.broadcast(flag, 0);
    if (flag.item() === 1) break;
    const x = gx.tensor(Array.from({ length: 16 }, (_, i) => value(rounds, g.rank, i)), { dtype: 'int32' });
    await g.allReduce(x);
    const got = x.toArraySync();
    for (let i = 0; i < 16; i++) if (got[i] !== value(rounds, 0, i) + value(rounds, 1, i)) wrong++;
    rounds++;
    await new Promise((r) => setTimeout(r, 10));
  }
  console.log(JSON.stringify({ rank: g.rank, rounds, wrong }));
  await gx.distributed.destroyProcessGroup();
})().catch((e) => { console.error(e.message); process.exit(3); });
`);
  return file;
}

/** Tallies of the fuzz, printed at the end. */
class Tally {
  frames = 0;
  connections = 0;
  hostile = 0;
  refused = 0;
  readonly misses: string[] = [];

  /** A hostile connection's outcome: closed, never answered, never authenticated (a `member` proved the secret first). */
  check(what: string, o: Outcome, member = false): void {
    this.hostile++;
    const ok = o.closed && o.authenticated === member && o.replies.length === 0;
    if (ok) this.refused++;
    else this.misses.push(`${what}: closed ${o.closed}, authenticated ${o.authenticated}, replies ${o.replies.length}`);
  }
}

async function batches<T>(items: T[], size: number, f: (x: T, i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map((x, j) => f(x, i + j)));
}

const hex = (n: number): string => randomBytes(n / 2).toString('hex');

/** Frames a stranger sends before (instead of) the handshake; each on a connection of its own. */
function strangerFrames(key: Buffer): [string, (c: RawConn) => Promise<number>][] {
  const one = (b: Buffer) => async (c: RawConn): Promise<number> => { await c.frame(0); c.write(b); return 1; };
  const auth = (h: object): Buffer => rawFrame(JSON.stringify(h));
  return [
    ['a header length of 0xFFFFFFFF and 64 KiB of junk', async (c) => {
      await c.frame(0);
      c.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
      for (let i = 0; i < 16 && !c.isClosed; i++) c.write(randomBytes(4096));
      return 1;
    }],
    ['a header length of 0x7FFFFFFF', one(rawFrame('{}', undefined, { header: 0x7fffffff }))],
    ['a header over the handshake cap', one(rawFrame(JSON.stringify({ id: 0, op: 'auth', nonce: hex(64), mac: hex(64), error: 'x'.repeat(1100) })))],
    ['17 bytes of bad JSON', one(rawFrame('{"id":0,"op":'))],
    ['a null header', one(rawFrame('null'))],
    ['an array header', one(rawFrame('[1,2]'))],
    ['a string header', one(rawFrame('"auth"'))],
    ['a header without id', one(rawFrame('{}'))],
    ['an id of the wrong type', one(auth({ id: 'x', op: 'auth', nonce: hex(64), mac: hex(64) }))],
    ['a nonce of the wrong type', one(auth({ id: 0, op: 'auth', nonce: 5, mac: [] }))],
    ['a __proto__ field', one(rawFrame(`{"id":0,"__proto__":{"op":"auth"}}`))],
    ['a get before the handshake', one(auth({ id: 1, op: 'get', key: 'joined', timeoutMs: 1 }))],
    ['a forged collective part before the handshake', one(rawFrame(JSON.stringify({ id: 1, op: 'set', key: 'c/0/1' }), Buffer.alloc(64, 7)))],
    ['an auth frame with a payload length of 0xFFFFFFFF', one(rawFrame(JSON.stringify({ id: 0, op: 'auth', nonce: hex(64), mac: hex(64) }), undefined, { payload: 0xffffffff }))],
    ['a wrong proof', one(auth({ id: 0, op: 'auth', nonce: hex(64), mac: hex(64) }))],
    ['a proof over another secret', async (c) => {
      const hello = await c.frame(0);
      const cn = nonce();
      c.write(frame({ id: 0, op: 'auth', nonce: cn, mac: proof(randomBytes(32), 'client', hello?.nonce ?? '', cn) }));
      return 1;
    }],
    ['the server\'s own nonce sent back', async (c) => {
      const hello = await c.frame(0);
      const sn = hello?.nonce ?? '';
      c.write(frame({ id: 0, op: 'auth', nonce: sn, mac: proof(key, 'server', sn, sn) }));
      return 1;
    }],
    ['silence', async (c) => { await c.frame(0); return 0; }],
    ['a slow sender (a byte every 50 ms)', async (c) => {
      await c.frame(0);
      const b = frame({ id: 0, op: 'auth', nonce: hex(64), mac: hex(64) });
      for (let i = 0; i < b.length && !c.isClosed; i++) {
        c.write(b.subarray(i, i + 1));
        await new Promise((r) => setTimeout(r, 50));
      }
      return 1;
    }],
  ];
}

/** Frames a client that holds the secret (a broken rank) may send; each must close its connection, no reply. */
function memberFrames(): [string, Buffer | 'slow'][] {
  const f = (h: object, p?: Buffer): Buffer => rawFrame(JSON.stringify(h), p);
  return [
    ['bad JSON', rawFrame('{"id":1,"op":"get",')], ['a null header', rawFrame('null')],
    ['a key of 5', f({ id: 1, op: 'set', key: 5 })], ['keys as a string', f({ id: 1, op: 'del', keys: 'x' })],
    ['keys of numbers', f({ id: 1, op: 'has', keys: [1] })], ['a has without keys', f({ id: 1, op: 'has' })],
    ['a delta of text', f({ id: 1, op: 'add', key: 'k', delta: 'x' })], ['readers of -1', f({ id: 1, op: 'set', key: 'k', readers: -1 })],
    ['a negative timeout', f({ id: 1, op: 'get', key: 'k', timeoutMs: -5 })], ['an unknown op', f({ id: 1, op: 'frob', key: 'k' })],
    ['a second auth', f({ id: 0, op: 'auth', nonce: hex(64), mac: hex(64) })], ['a reply instead of a request', f({ id: 1, value: 3 })],
    ['a key of 2 KiB', f({ id: 1, op: 'set', key: 'k'.repeat(2048) })],
    ['a header over the cap', f({ id: 1, op: 'has', keys: Array.from({ length: 600 }, (_, i) => `key${i}`) })],
    ['a payload length of 0xFFFFFFFF', rawFrame(JSON.stringify({ id: 1, op: 'set', key: 'k' }), undefined, { payload: 0xffffffff })],
    ['a payload one byte over the cap', f({ id: 1, op: 'set', key: 'k' }, Buffer.alloc(LIMITS.maxPayloadBytes + 1, 1))],
    ['half a frame, then silence', 'slow'],
  ];
}

/** A valid request of random kind on a fuzz key, or that request with bytes flipped, lengths changed, or cut. */
function mutated(r: () => number, id: number): Buffer {
  const key = `fuzz/${Math.floor(r() * 50)}`;
  const kinds: Omit<Header, 'id'>[] = [
    { op: 'set', key, readers: 1 + Math.floor(r() * 3) }, { op: 'get', key, timeoutMs: 5 }, { op: 'add', key: `${key}/n`, delta: Math.floor(r() * 10) },
    { op: 'has', keys: [key, `${key}/x`] }, { op: 'del', keys: [key] },
  ];
  const b = frame({ ...kinds[Math.floor(r() * kinds.length)], id }, randomBytes(Math.floor(r() * 64)));
  const how = r();
  if (how < 0.9) return b;
  if (how < 0.95) {
    for (let k = 0; k < 1 + Math.floor(r() * 3); k++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
    return b;
  }
  if (how < 0.98) {
    b.writeUInt32LE(Math.floor(r() * 2 ** 32), r() < 0.5 ? 0 : 4 + b.readUInt32LE(0));
    return b;
  }
  return Buffer.concat([b.subarray(0, Math.floor(r() * b.length)), randomBytes(Math.floor(r() * 32))]);
}

test.serial('the store refuses every hostile frame and connection, never exits, and every collective stays right', async (t) => {
  const t0 = Date.now();
  const port = await freePort();
  const secret = randomBytes(32).toString('hex');
  const key = Buffer.from(secret);
  const stop = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-store-stop-')), 'stop');
  const job = spawn(process.execPath, [CLI, 'run', '--nproc-per-node', '2', '--master-port', String(port), rankScript(stop)],
    { env: { ...process.env, GPUEXT_STORE_SECRET: secret, NODE_DEBUG: 'gpuext' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  job.stdout.on('data', (c: Buffer) => { out += c.toString(); });
  job.stderr.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<number | null>((resolve) => job.on('exit', (c) => resolve(c)));
  try {
    for (let i = 0; i < 600 && !out.includes('"ready"'); i++) await new Promise((r) => setTimeout(r, 50));
    const ready = JSON.parse(out.split('\n').find((l) => l.includes('"ready"')) ?? '{}') as { address?: { address: string; port: number } };
    t.deepEqual(ready.address && { address: ready.address.address, port: ready.address.port }, { address: '127.0.0.1', port }, `rank 0's store listens on the loopback only; stderr: ${err}`);
    const f0 = Date.now();
    t.log(`the job was ready after ${Date.now() - t0} ms`);
    await fuzz(t, port, key);
    t.log(`the fuzz took ${Date.now() - f0} ms`);
  } finally {
    fs.writeFileSync(stop, '');
  }
  const s0 = Date.now();
  const code = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000).unref())]);
  if (code === null) job.kill('SIGKILL');
  t.log(`stop to exit ${Date.now() - s0} ms`);
  const results = out.split('\n').filter((l) => l.includes('"rounds"')).map((l) => JSON.parse(l) as { rank: number; rounds: number; wrong: number });
  const logLines = err.split('\n').filter((l) => /closed the connection of/.test(l)).length;
  t.log(`the job: exit ${String(code)} (server exits: ${code === 0 ? 0 : 1}); ranks ${results.map((x) => `${x.rank}: ${x.rounds} allReduces, ${x.wrong} wrong`).join('; ')}; ` +
    `${logLines} log lines of closed connections`);
  t.is(code, 0, `the job (rank 0's store) exited: ${err.slice(-2000)}`);
  t.is(results.length, 2);
  t.true(results.every((x) => x.wrong === 0 && x.rounds >= 3), JSON.stringify(results));
  t.true(logLines > 0, 'each refused connection is logged (NODE_DEBUG=gpuext, or a warning for a member)');
});

async function fuzz(t: ExecutionContext, port: number, key: Buffer): Promise<void> {
  const n = new Tally();
  const r = rng(33);
  const open = async (): Promise<RawConn> => {
    n.connections++;
    return RawConn.open(port);
  };
  // Random bytes in place of the handshake; half the senders half-close, half wait for the deadline.
  await batches(Array.from({ length: 200 }, (_, i) => i), 50, async (i) => {
    const c = await open();
    await c.frame(0);
    c.write(randomBytes(1 + Math.floor(r() * 400)));
    n.frames++;
    if (i % 2 === 0) c.sock.end();
    n.check('random bytes', await c.outcome(LIMITS.authTimeoutMs + SLACK));
  });
  // Crafted frames from strangers, 4 rounds of each; deadlines checked for the slow and the silent.
  const cases = strangerFrames(key);
  let slowest = 0;
  let slowMember = 0;
  await batches(Array.from({ length: cases.length * 4 }, (_, i) => cases[i % cases.length]), 40, async ([what, act]) => {
    const c = await open();
    n.frames += await act(c);
    const o = await c.outcome(LIMITS.authTimeoutMs + SLACK);
    if (what === 'silence' || what.startsWith('a slow sender')) slowest = Math.max(slowest, o.ms);
    n.check(what, o);
  });
  // A proof replayed on another connection: made for connection A's nonce, sent on B.
  for (let i = 0; i < 10; i++) {
    const a = await open();
    const b = await open();
    const [ha] = [await a.frame(0), await b.frame(0)];
    const cn = nonce();
    b.write(frame({ id: 0, op: 'auth', nonce: cn, mac: proof(key, 'client', ha?.nonce ?? '', cn) }));
    n.frames++;
    n.check('a replayed proof', await b.outcome(LIMITS.authTimeoutMs + SLACK));
    a.sock.destroy();
  }
  // A flood of silent connections, more than the store keeps in their handshake at once.
  const flood = await Promise.all(Array.from({ length: 300 }, () => open()));
  for (const o of await Promise.all(flood.map((c) => c.outcome(LIMITS.authTimeoutMs + SLACK)))) n.check('a silent flood', o);
  // A member's malformed frames: authenticated, then each closes its connection without a reply.
  await batches(Array.from({ length: memberFrames().length * 3 }, (_, i) => memberFrames()[i % memberFrames().length]), 20, async ([what, b]) => {
    const c = await open();
    if ((await c.auth(key))?.op !== 'ok') return void n.misses.push(`${what}: the handshake failed`);
    if (b === 'slow') c.write(frame({ id: 1, op: 'set', key: 'k' }, Buffer.alloc(100)).subarray(0, 50));
    else c.write(b);
    n.frames++;
    const o = await c.outcome(LIMITS.frameTimeoutMs + SLACK);
    if (b === 'slow') slowMember = Math.max(slowMember, o.ms);
    n.check(`a member's ${what}`, o, true);
  });
  // Forged collective parts from a member: the old unnamespaced keys and other sessions' keys.
  const forger = await open();
  if ((await forger.auth(key))?.op === 'ok') {
    const call = Buffer.from(JSON.stringify({ what: 'allReduce', dtype: 'int32', shape: [16], op: 'sum' }));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(call.length);
    const post = Buffer.concat([len, call, Buffer.from(new Int32Array(16).fill(1000001).buffer)]);
    for (let s = 0; s < 400; s++) for (const k of [`c/${s}/1`, `c/${s}/0`, `${hex(32)}/c/${s}/1`]) forger.write(frame({ id: 1, op: 'set', key: k }, post));
    n.frames += 1200;
  }
  forger.sock.destroy();
  // Mutated requests from members: each is served or closes its connection; nothing else.
  let served = 0;
  let closedByMutation = 0;
  await batches(Array.from({ length: MUTATED }, (_, i) => i), 40, async () => {
    const c = await open();
    if ((await c.auth(key))?.op !== 'ok') return void n.misses.push('mutation: the handshake failed');
    for (let id = 1; id <= 30 && !c.isClosed; id++) {
      c.write(mutated(r, id));
      n.frames++;
      await new Promise((res) => setTimeout(res, 2));
    }
    const o = await c.outcome(300);
    served += o.replies.length;
    if (o.closed) closedByMutation++;
  });
  // Still serving: a new client proves the secret and reads back what it set.
  const client = await StoreClient.connect('127.0.0.1', port, { read: () => key, from: 'the test', mayBeStale: false }, 5000, 'test');
  await client.set('after', Buffer.from('fuzz'));
  const back = Buffer.from((await client.get('after', 1000)) ?? []).toString();
  client.close();
  t.log(`fuzz: ${n.frames} frames over ${n.connections} connections; hostile connections ${n.hostile}, refused ${n.refused}; ` +
    `mutated requests: ${served} served, ${closedByMutation} of ${MUTATED} connections closed; slowest refusal of a silent or slow stranger ${slowest} ms, of a member's half frame ${slowMember} ms`);
  t.deepEqual(n.misses, [], 'every hostile client refused');
  t.is(n.refused, n.hostile);
  t.true(slowest <= LIMITS.authTimeoutMs + SLACK, `slow and silent strangers closed within the deadline (${slowest} ms)`);
  t.true(slowMember >= LIMITS.frameTimeoutMs - 50 && slowMember <= LIMITS.frameTimeoutMs + SLACK, `a member's half frame closed at its deadline (${slowMember} ms)`);
  t.is(back, 'fuzz', 'the store still serves after the fuzz');
}

test('the store of a one-node job listens on 127.0.0.1; several nodes, on MASTER_ADDR\'s address or GPUEXT_STORE_BIND', async (t) => {
  const port = await freePort();
  const gs = await Promise.all([0, 1].map((rank) => createProcessGroup({ rank, worldSize: 2, masterAddr: '127.0.0.1', masterPort: port, timeoutMs: 20_000 }, 'test')));
  t.is(gs[0].storeAddress?.address, '127.0.0.1');
  t.is(gs[1].storeAddress, undefined);
  // Without a secret in the environment, rank 0 made one and left it for the others, for this user only.
  const keyFile = path.join(os.tmpdir(), `gpuext-store-${process.getuid?.() ?? os.userInfo().username}`, `${port}.key`);
  const made = !process.env.GPUEXT_STORE_SECRET && !process.env.GPUEXT_STORE_SECRET_FILE;
  if (made) t.is((fs.statSync(keyFile).mode & 0o777).toString(8), '600');
  await Promise.all(gs.map((g) => g.destroy()));
  t.false(fs.existsSync(keyFile), 'and removed when the group ends');

  t.is(await bindAddress({}, '127.0.0.1', true, 'f'), '127.0.0.1');
  t.is(await bindAddress({}, 'node7.example', true, 'f'), '127.0.0.1', 'all ranks local: the loopback whatever MASTER_ADDR says');
  t.is(await bindAddress({ GPUEXT_STORE_BIND: '0.0.0.0' }, 'h', false, 'f'), '0.0.0.0');
  await t.throwsAsync(bindAddress({}, 'localhost', false, 'f'), { message: /several nodes but MASTER_ADDR=localhost is a loopback address here.*GPUEXT_STORE_BIND/ });
  await t.throwsAsync(bindAddress({}, '203.0.113.9', false, 'f'), { message: /MASTER_ADDR=203\.0\.113\.9 \(203\.0\.113\.9\) is none of this host's addresses/ });
  const own = Object.values(os.networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal);
  if (own !== undefined) t.is(await bindAddress({}, own.address, false, 'f'), own.address, 'several nodes: MASTER_ADDR\'s own interface, not 0.0.0.0');
  await t.throwsAsync(createProcessGroup({ rank: 1, worldSize: 2, masterAddr: '203.0.113.9', masterPort: port, timeoutMs: 1000 }, 'gx.distributed.initProcessGroup'),
    { message: /initProcessGroup: the ranks of a job on several hosts need a shared secret.*GPUEXT_STORE_SECRET/ });
});

test('the wire refuses a 4 GiB length prefix at once and reads a trickled payload in linear time', (t) => {
  const errors: string[] = [];
  const frames: number[] = [];
  const reader = new FrameReader({ maxHeaderBytes: 1024, maxPayloadBytes: 64 << 20 }, (_h, p) => frames.push(p.length), (why) => errors.push(why));
  reader.push(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
  t.deepEqual(errors, ['a header of 4294967295 bytes is over the cap of 1024']);
  reader.push(randomBytes(1 << 20));
  t.is(errors.length, 1, 'nothing read after the first error');
  const ok = new FrameReader({ maxHeaderBytes: 1024, maxPayloadBytes: 64 << 20 }, (_h, p) => frames.push(p.length), (why) => errors.push(why));
  const big = frame({ id: 1, op: 'set', key: 'k' }, randomBytes(32 << 20));
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < big.length; i += 1024) ok.push(big.subarray(i, i + 1024));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  t.log(`32 MiB in 1 KiB chunks read in ${ms.toFixed(0)} ms`);
  t.deepEqual(frames, [32 << 20]);
  // Concatenating per chunk would copy 32768 * 16 MiB on average: minutes, not this.
  t.true(ms < 5000, `${ms} ms`);
});

test('gpuext run hands its ranks one fresh secret; several nodes without one, or a file others can read, is a usage error', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-store-secret-'));
  const file = path.join(dir, 'env.js');
  fs.writeFileSync(file, 'console.log(process.env.GPUEXT_STORE_SECRET);');
  const env = { ...process.env, GPUEXT_STORE_SECRET: '', GPUEXT_STORE_SECRET_FILE: '' };
  const runs = [0, 1].map(() => spawnSync(process.execPath, [CLI, 'run', '--nproc-per-node', '2', file], { encoding: 'utf8', env }));
  const secrets = runs.map((r) => r.stdout.trim().split('\n'));
  t.true(secrets.every((s) => s.length === 2 && s[0] === s[1] && /^[0-9a-f]{64}$/.test(s[0])), JSON.stringify(secrets));
  t.not(secrets[0][0], secrets[1][0], 'a new one for each job');
  const multi = spawnSync(process.execPath, [CLI, 'run', '--nnodes', '2', file], { encoding: 'utf8', env });
  t.is(multi.status, 2);
  t.regex(multi.stderr, /gpuext run: the ranks of a job on several hosts need a shared secret.*GPUEXT_STORE_SECRET/);
  const keyFile = path.join(dir, 'key');
  fs.writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o644 });
  fs.chmodSync(keyFile, 0o644);
  const open = spawnSync(process.execPath, [CLI, 'run', '--nnodes', '2', file], { encoding: 'utf8', env: { ...env, GPUEXT_STORE_SECRET_FILE: keyFile } });
  t.is(open.status, 2);
  t.regex(open.stderr, /can be read by other users \(mode 644\); chmod 600/);
  t.like(placementFromEnv({ RANK: '0', WORLD_SIZE: '4', LOCAL_WORLD_SIZE: '4', MASTER_ADDR: 'h', MASTER_PORT: '1' }, 'f'), { allLocal: true });
  t.like(placementFromEnv({ RANK: '0', WORLD_SIZE: '4', LOCAL_WORLD_SIZE: '2', MASTER_ADDR: 'h', MASTER_PORT: '1' }, 'f'), { allLocal: false });
  t.like(placementFromEnv({ SLURM_PROCID: '0', SLURM_NTASKS: '4', SLURM_JOB_NUM_NODES: '1', MASTER_ADDR: 'h', MASTER_PORT: '1' }, 'f'), { allLocal: true });
});

test('two nodes: rank 0 listens on MASTER_ADDR\'s own interface; a node with another secret is refused, saying so', async (t) => {
  const own = Object.values(os.networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal);
  if (own === undefined) return void t.pass('no network interface but the loopback here');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gx-store-nodes-')), 'rank.js');
  fs.writeFileSync(file, `const gx = require(${JSON.stringify(LIB)});
(async () => {
  const g = await gx.distributed.initProcessGroup({ timeoutMs: 15000 });
  const x = gx.tensor([g.rank + 1.5]);
  await g.allReduce(x);
  console.log(JSON.stringify({ rank: g.rank, sum: x.item(), address: g.storeAddress?.address }));
  await gx.distributed.destroyProcessGroup();
})().catch((e) => { console.error(e.message); process.exit(3); });`);
  const node = (k: number, port: number, secret: string): Promise<{ code: number | null; out: string; err: string }> => new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, 'run', '--nnodes', '2', '--node-rank', String(k), '--master-addr', own.address, '--master-port', String(port), '--grace-ms', '500', file],
      { env: { ...process.env, GPUEXT_STORE_SECRET: secret }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (b: Buffer) => { out += b.toString(); });
    c.stderr.on('data', (b: Buffer) => { err += b.toString(); });
    c.on('exit', (code) => resolve({ code, out, err }));
    nodes.push(c);
  });
  const nodes: ReturnType<typeof spawn>[] = [];
  const secret = randomBytes(32).toString('hex');
  const port = await freePort();
  const [a, b] = await Promise.all([node(0, port, secret), node(1, port, secret)]);
  t.is(a.code, 0, a.err);
  t.is(b.code, 0, b.err);
  t.deepEqual(JSON.parse(a.out), { rank: 0, sum: 4, address: own.address }, 'bound to the interface of MASTER_ADDR, not 0.0.0.0');
  t.deepEqual(JSON.parse(b.out), { rank: 1, sum: 4 });

  const port2 = await freePort();
  const first = node(0, port2, secret);
  const wrong = await node(1, port2, randomBytes(32).toString('hex'));
  nodes[2].kill('SIGTERM');
  await first;
  t.is(wrong.code, 3);
  t.regex(wrong.err, new RegExp(`initProcessGroup: rank 0's store at ${own.address.replace(/\./g, '\\.')}:${port2} refused this rank's secret \\(GPUEXT_STORE_SECRET\\)`));
});
