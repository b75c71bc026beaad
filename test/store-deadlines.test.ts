// Every wait on rank 0's store ends in an error naming what it waited for:
// a port squatted by a silent program, by one that speaks something else, by
// one that fakes the handshake; a rank 0 stopped (SIGSTOP) before the
// rendezvous and during collectives, each within timeoutMs + 1 s; a rank 0
// killed while a rank waits, reported as a closed connection at once, not as
// a timeout; a rank holding another secret, refused at once.
import test from 'ava';
import { spawn, type ChildProcess } from 'child_process';
import * as net from 'net';
import * as path from 'path';

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import { createProcessGroup } from '../lib/distributed/group';
import { StoreClient, StoreServer } from '../lib/distributed/store';
import { nonce } from '../lib/distributed/trust';
import { frame } from '../lib/distributed/wire';
import { RawConn, rawFrame } from './store-hostile';

const LIB = path.resolve(__dirname, '../lib');
const INIT = 'gx.distributed.initProcessGroup';

/** A program on the port that accepts connections and does `onConn` with them. */
async function squatter(onConn: (s: net.Socket) => void): Promise<{ port: number; close: () => void }> {
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    onConn(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

/** How long `p` took to settle, and its error. */
async function timed(p: Promise<unknown>): Promise<{ ms: number; message: string }> {
  const t0 = Date.now();
  try {
    await p;
    return { ms: Date.now() - t0, message: 'it succeeded' };
  } catch (e) {
    return { ms: Date.now() - t0, message: e instanceof Error ? e.message : String(e) };
  }
}

const rank1 = (port: number, timeoutMs: number): Promise<gx.distributed.ProcessGroup> =>
  createProcessGroup({ rank: 1, worldSize: 2, masterAddr: '127.0.0.1', masterPort: port, timeoutMs }, INIT);

test('a squatted port is an error naming rank 0 and its address within timeoutMs + 1 s', async (t) => {
  const silent = await squatter(() => undefined);
  const a = await timed(rank1(silent.port, 2000));
  t.log(`silent squatter: ${a.ms} ms: ${a.message}`);
  t.regex(a.message, new RegExp(`^${INIT}: rank 0 at 127\\.0\\.0\\.1:${silent.port} did not answer within 2 s: something accepted the connection but did not greet as a gpuext store`));
  t.true(a.ms >= 1900 && a.ms <= 3000, `${a.ms} ms`);
  const r0 = await timed(createProcessGroup({ rank: 0, worldSize: 2, masterAddr: '127.0.0.1', masterPort: silent.port, timeoutMs: 2000 }, INIT));
  t.regex(r0.message, new RegExp(`^${INIT}: rank 0 cannot listen on 127\\.0\\.0\\.1:${silent.port}: .*EADDRINUSE`));
  silent.close();

  const http = await squatter((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  const b = await timed(rank1(http.port, 2000));
  t.regex(b.message, new RegExp(`${INIT}: the program at 127\\.0\\.0\\.1:${http.port} is not a gpuext store .*is another program listening on port ${http.port}\\?`));
  t.true(b.ms < 1000, `${b.ms} ms`);
  http.close();

  // A program that greets like a store but cannot prove the secret in return.
  const fake = await squatter((s) => {
    s.write(frame({ id: 0, op: 'hello', v: 1, nonce: nonce() }));
    s.once('data', () => s.write(frame({ id: 0, op: 'ok', mac: nonce(), session: nonce().slice(0, 32) })));
  });
  const c = await timed(StoreClient.connect('127.0.0.1', fake.port, { read: () => Buffer.from('x'.repeat(32)), from: 'the test', mayBeStale: false }, 2000, 'f'));
  t.regex(c.message, /^f: the program at 127\.0\.0\.1:\d+ does not hold the job's secret \(the test\): it is not this job's store/);
  fake.close();
});

test('a rank holding another secret is refused at once, saying so', async (t) => {
  const server = await StoreServer.listen('127.0.0.1', 0, Buffer.from('a'.repeat(32)));
  const e = await timed(StoreClient.connect('127.0.0.1', server.port, { read: () => Buffer.from('b'.repeat(32)), from: 'GPUEXT_STORE_SECRET', mayBeStale: false }, 5000, 'f'));
  t.regex(e.message, /^f: rank 0's store at 127\.0\.0\.1:\d+ refused this rank's secret \(GPUEXT_STORE_SECRET\): every rank of a job must have the same secret/);
  t.true(e.ms < 2000);
  t.like(server.stats, { connections: 1, authenticated: 0, refused: 1 });
  await server.close();
});

/** Rank 0 of a two-rank job in a child process: joins, allReduces [1.5, -2] once, prints the result, then idles. */
function startRank0(port: number): ChildProcess {
  const script = `const gx = require(${JSON.stringify(LIB)});
(async () => {
  const g = await gx.distributed.initProcessGroup({ timeoutMs: 60000 });
  const x = gx.tensor([1.5, -2]);
  await g.allReduce(x);
  console.log(JSON.stringify(Array.from(x.toArraySync())));
  setInterval(() => {}, 1000);
})().catch((e) => { console.error(e.message); process.exit(3); });`;
  return spawn(process.execPath, ['-e', script], {
    env: { ...process.env, RANK: '0', WORLD_SIZE: '2', LOCAL_WORLD_SIZE: '2', MASTER_ADDR: '127.0.0.1', MASTER_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

test('a stopped rank 0 is an error naming it within timeoutMs + 1 s; a killed one, a closed connection at once', async (t) => {
  const port = await freePort();
  const child = startRank0(port);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr?.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const T = 2000;
  try {
    // Rank 0 is up when its port takes connections (this one closes at once, before the handshake).
    let up = false;
    for (let i = 0; i < 600 && !up; i++) {
      up = await new Promise<boolean>((r) => {
        const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); r(true); });
        s.on('error', () => setTimeout(() => r(false), 50));
      });
    }
    t.true(up, `rank 0 is listening; its stderr: ${err}`);

    child.kill('SIGSTOP');
    const join = await timed(rank1(port, T));
    t.log(`stopped before the rendezvous: ${join.ms} ms: ${join.message}`);
    t.regex(join.message, new RegExp(`^${INIT}: rank 0 at 127\\.0\\.0\\.1:${port} did not answer within 2 s: .*rank 0 stopped`));
    t.true(join.ms <= T + 1000, `${join.ms} ms`);
    child.kill('SIGCONT');

    const g = await rank1(port, T);
    const x = gx.tensor([0.25, 4]);
    await g.allReduce(x);
    t.deepEqual(Array.from(x.toArraySync()), [1.75, 2]);

    child.kill('SIGSTOP');
    const red = await timed(g.allReduce(gx.tensor([1, 2])).wait());
    t.log(`stopped during an allReduce: ${red.ms} ms: ${red.message}`);
    t.regex(red.message, new RegExp(`^gx\\.distributed\\.allReduce: rank 0 at 127\\.0\\.0\\.1:${port} did not answer within 2 s`));
    t.true(red.ms >= T - 100 && red.ms <= T + 1000, `${red.ms} ms`);
    // A get waits on the server for timeoutMs; the client gives it half a second more, then names rank 0.
    const rec = await timed(g.recv(gx.zeros([2]), 0).wait());
    t.log(`stopped during a recv: ${rec.ms} ms: ${rec.message}`);
    t.regex(rec.message, new RegExp(`^gx\\.distributed\\.recv: rank 0 at 127\\.0\\.0\\.1:${port} did not answer within 2\\.5 s`));
    t.true(rec.ms >= T && rec.ms <= T + 1000, `${rec.ms} ms`);
    child.kill('SIGCONT');

    // A rank waiting (a recv nobody sends) when rank 0 dies: the connection closed, said at once.
    const pending = timed(g.recv(gx.zeros([2]), 0).wait());
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    child.kill('SIGKILL');
    const closed = await pending;
    t.log(`killed during a recv: ${Date.now() - t0} ms after the kill: ${closed.message}`);
    t.regex(closed.message, new RegExp(`^gx\\.distributed\\.recv: the connection to rank 0's store at 127\\.0\\.0\\.1:${port} closed.*rank 0 exited`));
    t.true(Date.now() - t0 < T / 2, 'reported when it closed, not at the deadline');
    t.regex(out, /\[1\.75,2\]/, 'rank 0 got the same allReduce');
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
});

test('the server: a part posted once, a closed get not counted as a reader, add of a non-number, no frame served after a refused one', async (t) => {
  const key = Buffer.from('k'.repeat(32));
  const server = await StoreServer.listen('127.0.0.1', 0, key);
  const secret = { read: () => key, from: 'the test', mayBeStale: false };
  const a = await StoreClient.connect('127.0.0.1', server.port, secret, 2000, 'f');
  await a.set('part', Buffer.from([1]), 1, true);
  await t.throwsAsync(a.set('part', Buffer.from([2]), 1, true), { message: /refused a 'set': the key [0-9a-f]{32}\/part holds a value already/ });
  t.deepEqual([...((await a.get('part', 100)) ?? [])], [1]);

  // A get whose connection closed: the next set's value stays for the one reader still to come.
  const raw = await RawConn.open(server.port);
  const ok = await raw.auth(key);
  raw.write(frame({ id: 1, op: 'get', key: `${ok?.session ?? ''}/late`, timeoutMs: 5000 }));
  await new Promise((r) => setTimeout(r, 100));
  raw.sock.destroy();
  await raw.closed;
  await new Promise((r) => setTimeout(r, 100));
  await a.set('late', Buffer.from([7]), 1);
  t.deepEqual([...((await a.get('late', 100)) ?? [])], [7]);

  await a.set('text', Buffer.from('abc'));
  await t.throwsAsync(a.add('text', 1), { message: /holds no number/ });

  // A frame the server refuses (a reply, not a request: the wire lets it through) and a set in one chunk: the set is not served.
  const bad = await RawConn.open(server.port);
  const ok2 = await bad.auth(key);
  bad.write(Buffer.concat([rawFrame('{"id":1,"value":3}'), frame({ id: 2, op: 'set', key: `${ok2?.session ?? ''}/after` }, Buffer.from([1]))]));
  const o = await bad.outcome(2000);
  t.true(o.closed);
  t.deepEqual(await a.has(['after', 'text']), [false, true]);
  t.like(server.stats, { connections: 3, authenticated: 3, refused: 1 });
  a.close();
  await server.close();
});
