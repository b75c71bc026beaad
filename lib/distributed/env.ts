// Where a process stands in a distributed job, read from the environment the
// launchers set: gpuext run / torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID) and Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK). The rendezvous address comes
// from MASTER_ADDR / MASTER_PORT in every case (Slurm and MPI jobs export
// them in their batch script, as with torch).

/** This process's place in the job and where the rendezvous is. */
export interface JobPlacement {
  rank: number;
  worldSize: number;
  localRank: number;
  masterAddr: string;
  masterPort: number;
  /** Which launcher's variables were read. */
  source: 'torchrun' | 'slurm' | 'openmpi';
  /** Whether the launcher says every rank runs on this host (then rank 0's store listens on the loopback only). */
  allLocal: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Each launcher's variables; `hosts`: the one that is 1 when the whole job is on one host, or the ranks on this one (== size). */
const SOURCES: readonly { source: JobPlacement['source']; rank: string; size: string; local: string; hosts: { nodes: string } | { localSize: string } }[] = [
  { source: 'torchrun', rank: 'RANK', size: 'WORLD_SIZE', local: 'LOCAL_RANK', hosts: { localSize: 'LOCAL_WORLD_SIZE' } },
  { source: 'slurm', rank: 'SLURM_PROCID', size: 'SLURM_NTASKS', local: 'SLURM_LOCALID', hosts: { nodes: 'SLURM_JOB_NUM_NODES' } },
  { source: 'openmpi', rank: 'OMPI_COMM_WORLD_RANK', size: 'OMPI_COMM_WORLD_SIZE', local: 'OMPI_COMM_WORLD_LOCAL_RANK', hosts: { localSize: 'OMPI_COMM_WORLD_LOCAL_SIZE' } },
];

function integer(env: Env, name: string, fn: string, min: number): number {
  const text = env[name];
  const v = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isInteger(v) || v < min) {
    throw new Error(`${fn}: the environment variable ${name} must be an integer >= ${min}, got ${text === undefined ? 'nothing' : JSON.stringify(text)}`);
  }
  return v;
}

/** The placement the environment describes; an error names what is missing. `fn` names the caller. */
export function placementFromEnv(env: Env, fn: string): JobPlacement {
  const s = SOURCES.find((x) => env[x.rank] !== undefined && env[x.size] !== undefined);
  if (s === undefined) {
    throw new Error(`${fn}: no RANK and WORLD_SIZE in the environment (nor Slurm's SLURM_PROCID / SLURM_NTASKS or Open MPI's ` +
      'OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE); start the script with `npx gpuext run --nproc-per-node N script.js`, ' +
      'or pass { rank, worldSize, masterAddr, masterPort }');
  }
  const worldSize = integer(env, s.size, fn, 1);
  const rank = integer(env, s.rank, fn, 0);
  if (rank >= worldSize) throw new Error(`${fn}: ${s.rank}=${rank} is not below ${s.size}=${worldSize}`);
  const localRank = env[s.local] === undefined ? 0 : integer(env, s.local, fn, 0);
  const masterAddr = env.MASTER_ADDR ?? (worldSize === 1 ? '127.0.0.1' : undefined);
  if (masterAddr === undefined || masterAddr === '') {
    throw new Error(`${fn}: MASTER_ADDR is not set; export the address of rank 0's host (and MASTER_PORT) before starting the job`);
  }
  const masterPort = env.MASTER_PORT === undefined && worldSize === 1 ? 0 : integer(env, 'MASTER_PORT', fn, 1);
  if (masterPort > 65535) throw new Error(`${fn}: MASTER_PORT=${masterPort} is not a TCP port`);
  const allLocal = 'nodes' in s.hosts ? env[s.hosts.nodes] === '1' : Number(env[s.hosts.localSize]) === worldSize;
  return { rank, worldSize, localRank, masterAddr, masterPort, source: s.source, allLocal };
}
