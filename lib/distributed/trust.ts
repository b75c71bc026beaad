// Who may talk to a job's store, and where it listens: the job's secret (from
// the environment, a file, or made by rank 0 of a one-node job), the proofs
// of the handshake, and the address rank 0 binds.
//
// NOTE [ The store's trust ]
// The store trusts a peer that proves it holds the job's secret, and nothing
// else: not its address, not its port, not what it says it is. The secret
// comes, in this order, from GPUEXT_STORE_SECRET, from the file named by
// GPUEXT_STORE_SECRET_FILE (readable by its owner only, as ssh asks of a
// key), or, for a job whose ranks all run on this host and that brought none,
// from rank 0, which makes a random one and leaves it for the others in a
// file of a folder only this user can read (`gpuext run` makes one and hands
// it to its ranks in their environment). A job on several hosts has no such
// shared place: without a secret it is refused, saying how to give one.
// The secret never crosses the wire: each side proves it by an HMAC-SHA256 of
// both sides' fresh nonces (store.ts, NOTE [ The store's handshake ]).
// What this does not cover (README "What the store trusts"): the traffic after
// the handshake is neither encrypted nor authenticated frame by frame, so a
// host on the path between two nodes can read and change it; every process
// of the user running the job (and root) can read the secret.
import { createHmac, randomBytes, timingSafeEqual } from 'crypto';
import { promises as dns } from 'dns';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

/** The environment variables the store reads, written once (messages and the launcher use these names). */
export const STORE_ENV = {
  secret: 'GPUEXT_STORE_SECRET',
  secretFile: 'GPUEXT_STORE_SECRET_FILE',
  bind: 'GPUEXT_STORE_BIND',
} as const;

/** The shortest secret accepted: 16 characters (`openssl rand -hex 32` gives 64). */
const MIN_SECRET = 16;

type Env = Readonly<Record<string, string | undefined>>;

/** The job's secret as this rank knows it. */
export interface JobSecret {
  /** The key, or undefined while it cannot be read yet (another rank's file before rank 0 writes it). */
  read(): Uint8Array | undefined;
  /** Where it comes from, for messages. */
  readonly from: string;
  /** Whether a refusal may be a stale file (read it again and retry) rather than a wrong secret. */
  readonly mayBeStale: boolean;
  /** Rank 0 of a one-node job without a secret: writes the key for the other ranks; returns the file's remover. */
  publish?: (port: number) => () => void;
}

const HOW = `set ${STORE_ENV.secret} (or ${STORE_ENV.secretFile}, a file only its owner can read) to the same value on every rank, ` +
  'e.g. `export GPUEXT_STORE_SECRET=$(openssl rand -hex 32)`';

function checked(text: string, from: string, fn: string): Buffer {
  const s = text.trim();
  if (s.length < MIN_SECRET) throw new Error(`${fn}: the store's secret (${from}) must hold at least ${MIN_SECRET} characters, got ${s.length}; ${HOW}`);
  return Buffer.from(s, 'utf8');
}

const getuid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** Refuses a file or folder others can read or that another user owns (they could read or swap the secret). */
function checkPrivate(p: string, fn: string, what: 'file' | 'folder'): void {
  const st = fs.lstatSync(p);
  if (what === 'file' ? !st.isFile() : !st.isDirectory()) throw new Error(`${fn}: ${p} must be a ${what}, not a link or anything else`);
  const uid = getuid();
  if (uid !== undefined && st.uid !== uid) throw new Error(`${fn}: ${p} belongs to user ${st.uid}, not to this user (${uid}); remove it`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new Error(`${fn}: ${p} can be read by other users (mode ${(st.mode & 0o777).toString(8)}); chmod ${what === 'file' ? 600 : 700} ${p}`);
  }
}

function readSecretFile(file: string, fn: string): Buffer {
  try {
    checkPrivate(file, fn, 'file');
    return checked(fs.readFileSync(file, 'utf8'), `${STORE_ENV.secretFile}=${file}`, fn);
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    throw new Error(m.startsWith(`${fn}:`) ? m : `${fn}: cannot read ${STORE_ENV.secretFile}=${file}: ${m}`);
  }
}

/** The folder where rank 0 of a one-node job leaves its secret for the others: this user's, mode 700. */
function secretDir(): string {
  return path.join(os.tmpdir(), `gpuext-store-${getuid() ?? os.userInfo().username}`);
}

const secretFile = (port: number): string => path.join(secretDir(), `${port}.key`);

/** This rank's view of the job's secret; `oneNode`: every rank runs on this host. */
export function jobSecret(env: Env, fn: string, rank: number, worldSize: number, oneNode: boolean, port: number): JobSecret {
  const given = env[STORE_ENV.secret];
  if (given !== undefined && given !== '') {
    const key = checked(given, STORE_ENV.secret, fn);
    return { read: () => key, from: STORE_ENV.secret, mayBeStale: false };
  }
  const file = env[STORE_ENV.secretFile];
  if (file !== undefined && file !== '') {
    const key = readSecretFile(file, fn);
    return { read: () => key, from: `${STORE_ENV.secretFile}=${file}`, mayBeStale: false };
  }
  if (worldSize === 1) {
    const key = Buffer.from(randomBytes(32).toString('hex'));
    return { read: () => key, from: 'a key of its own (one rank)', mayBeStale: false };
  }
  if (!oneNode) throw new Error(`${fn}: the ranks of a job on several hosts need a shared secret for rank 0's store: ${HOW}`);
  const where = secretFile(port);
  if (rank === 0) {
    const key = Buffer.from(randomBytes(32).toString('hex'));
    return { read: () => key, from: `a key rank 0 made (${where})`, mayBeStale: false, publish: (p) => publishSecret(key, p, fn) };
  }
  return {
    read: () => {
      // Absent, or not private yet: rank 0 has not written it; a wrong owner or mode is an error at once.
      if (!fs.existsSync(where)) return undefined;
      checkPrivate(secretDir(), fn, 'folder');
      return readSecretFile(where, fn);
    },
    from: `the key rank 0 left in ${where}`,
    mayBeStale: true,
  };
}

/** Writes rank 0's key where the other ranks of this host read it (atomically); returns its remover. */
function publishSecret(key: Buffer, port: number, fn: string): () => void {
  const dir = secretDir();
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  checkPrivate(dir, fn, 'folder');
  const file = secretFile(port);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, key, { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
  return () => {
    try {
      // Only if it is still ours: a later job on this port may have written its own.
      if (fs.readFileSync(file).equals(key)) fs.unlinkSync(file);
    } catch { /* gone already */ }
  };
}

/** A fresh nonce: 32 random bytes, hex. */
export const nonce = (): string => randomBytes(32).toString('hex');

/** One side's proof that it holds the key: an HMAC of both nonces, labelled by side (a proof is never valid for the other side). */
export function proof(key: Uint8Array, side: 'client' | 'server', serverNonce: string, clientNonce: string): string {
  return createHmac('sha256', key).update(`gpuext-store v1 ${side}\n${serverNonce}\n${clientNonce}`).digest('hex');
}

/** Compares two proofs in constant time. */
export function sameProof(got: string, want: string): boolean {
  const a = Buffer.from(got, 'hex');
  const b = Buffer.from(want, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/** Whether `host` names this machine's loopback. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  const v4 = host.startsWith('::ffff:') ? host.slice(7) : host;
  return net.isIPv4(v4) && v4.startsWith('127.');
}

/** The loopback address a one-node job uses: MASTER_ADDR when it is one (127.0.0.2 stays), else 127.0.0.1. */
export const loopbackOf = (host: string): string => (isLoopback(host) && host !== 'localhost' ? host : '127.0.0.1');

/**
 * Where rank 0's store listens: GPUEXT_STORE_BIND when set; the loopback for a
 * one-node job; else MASTER_ADDR's own address on this host (rank 0 runs
 * there), refused when it is no address of this host's or a loopback one.
 */
export async function bindAddress(env: Env, host: string, oneNode: boolean, fn: string): Promise<string> {
  const named = env[STORE_ENV.bind];
  if (named !== undefined && named !== '') return named;
  if (oneNode) return loopbackOf(host);
  const fix = `set ${STORE_ENV.bind} to the address of this host the other nodes reach (0.0.0.0 listens on every interface)`;
  let addrs: string[];
  try {
    addrs = (await dns.lookup(host, { all: true })).map((a) => a.address);
  } catch (e) {
    throw new Error(`${fn}: rank 0 cannot resolve MASTER_ADDR=${host} (${e instanceof Error ? e.message : String(e)}); ${fix}`);
  }
  const mine = new Set(Object.values(os.networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address)));
  const own = addrs.find((a) => mine.has(a) && !isLoopback(a));
  if (own !== undefined) return own;
  const why = addrs.some(isLoopback)
    ? `is a loopback address here (${addrs.join(', ')}), which the other nodes cannot reach`
    : `(${addrs.join(', ')}) is none of this host's addresses (${[...mine].join(', ')})`;
  throw new Error(`${fn}: the job runs on several nodes but MASTER_ADDR=${host} ${why}; ${fix}`);
}
