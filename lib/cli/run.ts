// `gpuext run`: starts a script once per rank, as torchrun does. Each rank
// gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
// MASTER_ADDR and MASTER_PORT (what gx.distributed.initProcessGroup reads).
// Signals (Ctrl-C, SIGTERM) are forwarded to every rank; when one rank
// fails, the others are stopped (SIGTERM, then SIGKILL after a grace period)
// and the launcher exits with that rank's status, quoting the end of its
// stderr. No rank is left running when the launcher returns.
// The ranks of a one-node job get a fresh random secret for rank 0's store in
// GPUEXT_STORE_SECRET (trust.ts, NOTE [ The store's trust ]); a job of several
// nodes must bring its own, the same on every node.
// Each rank's current GPU is its local rank's (GPUEXT_DEVICE=LOCAL_RANK, which
// the library applies at load, modulo the GPUs there are: NOTE [ Current
// device ] in csrc/cuda/runtime.h), so `{ device: 'cuda' }` puts rank k on
// cuda:k, as torch.cuda.set_device(local_rank) does in a torchrun script.
// --no-set-device (or GPUEXT_RUN_SET_DEVICE=0) leaves it to the script.
import { spawn, type ChildProcess } from 'child_process';
import { randomBytes } from 'crypto';
import * as net from 'net';

import { jobSecret, STORE_ENV } from '../distributed/trust';

import { parseArgs, UsageError } from './args';

const HELP = `usage: gpuext run [options] script.js [script args...]

  --nproc-per-node N   ranks on this machine (default 1)
  --nnodes N           machines in the job (default 1)
  --node-rank K        this machine's index, 0 to nnodes - 1 (default 0)
  --master-addr HOST   rank 0's host (default 127.0.0.1)
  --master-port PORT   rank 0's store port (default: a free one with one node; 29500 with several)
  --grace-ms MS        how long stopped ranks get before SIGKILL (default 5000)
  --no-set-device      leave each rank's current GPU alone (default: cuda:LOCAL_RANK,
                       modulo the GPUs; also GPUEXT_RUN_SET_DEVICE=0)

Each rank runs \`node script.js\` with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT set, and
${STORE_ENV.secret}: on one node a random secret made for the job; on several,
export ${STORE_ENV.secret} (or ${STORE_ENV.secretFile}) with the same value on
every node. GPUEXT_DEVICE=LOCAL_RANK makes each rank's current GPU (what
'cuda' means) cuda:LOCAL_RANK, unless --no-set-device. Rank 0's store listens
on the loopback for one node; on several,
on MASTER_ADDR's address (${STORE_ENV.bind} names another).`;

const SPEC = {
  'nproc-per-node': { value: true },
  nnodes: { value: true },
  'node-rank': { value: true },
  'master-addr': { value: true },
  'master-port': { value: true },
  'grace-ms': { value: true },
  'no-set-device': { value: false },
  help: { value: false, alias: 'h' },
} as const;

function positiveInt(v: string | true | undefined, name: string, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v === true || !Number.isInteger(n) || n < min) throw new UsageError(`gpuext run: --${name} must be an integer >= ${min}, got ${String(v)}`);
  return n;
}

/** A TCP port nothing listens on now (for rank 0's store on a one-machine job; tests use it too). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The last lines a rank wrote to stderr, kept to quote when it fails. */
class Tail {
  private lines: string[] = [];
  private partial = '';

  push(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts);
    if (this.lines.length > 20) this.lines = this.lines.slice(-20);
  }

  text(): string {
    return [...this.lines, this.partial].filter((l) => l !== '').join('\n');
  }
}

/** What every rank of this node is started with. */
interface Launch {
  script: string;
  scriptArgs: string[];
  nproc: number;
  nodeRank: number;
  worldSize: number;
  masterAddr: string;
  masterPort: number;
  secret: Record<string, string>;
  setDevice: boolean;
}

interface RankChild {
  rank: number;
  child: ChildProcess;
  tail: Tail;
}

/** Starts this node's ranks, each with torchrun's environment; their stderr is passed on and its end kept. */
function spawnRanks(l: Launch): RankChild[] {
  const { script, scriptArgs, nproc, nodeRank, worldSize, masterAddr, masterPort, secret, setDevice } = l;
  const children: RankChild[] = [];
  for (let local = 0; local < nproc; local++) {
    const rank = nodeRank * nproc + local;
    const child = spawn(process.execPath, [script, ...scriptArgs], {
      stdio: ['inherit', 'inherit', 'pipe'],
      env: {
        ...process.env,
        RANK: String(rank), LOCAL_RANK: String(local), WORLD_SIZE: String(worldSize), LOCAL_WORLD_SIZE: String(nproc),
        GROUP_RANK: String(nodeRank), MASTER_ADDR: masterAddr, MASTER_PORT: String(masterPort), ...secret,
        ...(setDevice ? { GPUEXT_DEVICE: String(local) } : {}),
      },
    });
    const tail = new Tail();
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (c: string) => {
      process.stderr.write(c);
      tail.push(c);
    });
    children.push({ rank, child, tail });
  }
  return children;
}

export async function runCommand(argv: string[]): Promise<number> {
  // Options come before the script; what follows it is the script's.
  const at = argv.findIndex((a, i) => !a.startsWith('-') && (i === 0 || !isValueOption(argv[i - 1])));
  const own = at < 0 ? argv : argv.slice(0, at);
  const a = parseArgs('run', own, SPEC);
  if (a.options.has('help')) {
    console.log(HELP);
    return 0;
  }
  if (at < 0) throw new UsageError('gpuext run: name the script to run: gpuext run --nproc-per-node 2 train.js');
  const [script, ...scriptArgs] = argv.slice(at);
  const nproc = positiveInt(a.options.get('nproc-per-node'), 'nproc-per-node', 1);
  const nnodes = positiveInt(a.options.get('nnodes'), 'nnodes', 1);
  const nodeRank = positiveInt(a.options.get('node-rank'), 'node-rank', 0, 0);
  if (nodeRank >= nnodes) throw new UsageError(`gpuext run: --node-rank ${nodeRank} must be below --nnodes ${nnodes}`);
  const grace = positiveInt(a.options.get('grace-ms'), 'grace-ms', 5000, 0);
  const addrOpt = a.options.get('master-addr');
  const masterAddr = typeof addrOpt === 'string' ? addrOpt : '127.0.0.1';
  const portOpt = a.options.get('master-port');
  const masterPort = portOpt !== undefined ? positiveInt(portOpt, 'master-port', 0) : nnodes === 1 ? await freePort() : 29500;
  const worldSize = nproc * nnodes;
  const secret = storeSecret(nnodes);
  const setDevice = !a.options.has('no-set-device') && process.env.GPUEXT_RUN_SET_DEVICE !== '0';

  const children = spawnRanks({ script, scriptArgs, nproc, nodeRank, worldSize, masterAddr, masterPort, secret, setDevice });

  return new Promise<number>((resolve) => {
    let failure: { rank: number; code: number; why: string } | undefined;
    let running = children.length;
    let killTimer: NodeJS.Timeout | undefined;
    const stopAll = (signal: NodeJS.Signals): void => {
      for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill(signal);
      if (killTimer === undefined && grace >= 0) {
        killTimer = setTimeout(() => {
          for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
        }, grace);
        killTimer.unref();
      }
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      failure ??= { rank: -1, code: signal === 'SIGINT' ? 130 : 143, why: `gpuext run: ${signal}: stopping every rank` };
      stopAll(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    for (const c of children) {
      c.child.on('error', (e) => {
        failure ??= { rank: c.rank, code: 1, why: `gpuext run: rank ${c.rank} could not start: ${e.message}` };
        stopAll('SIGTERM');
      });
      c.child.on('exit', (code, signal) => {
        running--;
        if ((code !== 0 || signal !== null) && failure === undefined) {
          const status = signal !== null ? `was killed by ${signal}` : `exited with status ${code}`;
          const tail = c.tail.text();
          failure = { rank: c.rank, code: code !== null && code !== 0 ? code : 1, why: `gpuext run: rank ${c.rank} ${status}; stopping the others${tail ? `\n--- the end of rank ${c.rank}'s stderr:\n${tail}` : ''}` };
          stopAll('SIGTERM');
        }
        if (running === 0) {
          if (killTimer !== undefined) clearTimeout(killTimer);
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          if (failure !== undefined) console.error(failure.why);
          resolve(failure?.code ?? 0);
        }
      });
    }
  });
}

/**
 * The store's secret for the ranks' environment: the user's, checked now (a
 * missing file is a usage error here, not one per rank); else, on one node, a
 * fresh one; on several nodes none is an error saying how to give one.
 */
function storeSecret(nnodes: number): Record<string, string> {
  try {
    jobSecret(process.env, 'gpuext run', 1, 2, nnodes === 1, 0);
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const given = [STORE_ENV.secret, STORE_ENV.secretFile].some((k) => (process.env[k] ?? '') !== '');
  return given ? {} : { [STORE_ENV.secret]: randomBytes(32).toString('hex') };
}

function isValueOption(a: string): boolean {
  const name = a.startsWith('--') ? a.slice(2) : '';
  return !name.includes('=') && name in SPEC && (SPEC as Record<string, { value: boolean }>)[name].value;
}
