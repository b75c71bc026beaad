// How big a fuzz run is and what it replays: from the environment
// (GPUEXT_FUZZ_RUNS, GPUEXT_FUZZ_SEED, GPUEXT_FUZZ_PATH, GPUEXT_FUZZ_ONLY,
// GPUEXT_FUZZ_STRICT, GPUEXT_REQUIRE_CUDA) or the command line of
// scripts/fuzz.js, which wins.

/** Runs per property (times its weight) in the bounded run of `npm test`. */
export const DEFAULT_RUNS = 20000;

export interface FuzzConfig {
  runs: number;
  seed: number;
  path?: string;
  only?: string[];
  strict: boolean;
  devices: string[];
  requireCuda: boolean;
  /** Print why the model expected the Errors it expected. */
  verbose: boolean;
}

export interface Args {
  runs?: string;
  seed?: string;
  path?: string;
  only?: string;
  device?: string;
  strict?: boolean;
  verbose?: boolean;
}

/** --runs N --seed S --path P --only a,b --device cpu --strict */
export function parseArgs(argv: readonly string[]): Args {
  const out: Args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--(runs|seed|path|only|device)(?:=(.*))?$/.exec(a);
    if (a === '--strict') out.strict = true;
    else if (a === '--verbose') out.verbose = true;
    else if (m) out[m[1] as 'runs' | 'seed' | 'path' | 'only' | 'device'] = m[2] ?? argv[++i];
    else throw new Error(`fuzz: unknown argument ${a}; expected --runs N, --seed S, --path P, --only NAME, --device cpu|cuda, --strict, --verbose`);
  }
  return out;
}

function int(v: string | undefined, what: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`fuzz: ${what} must be an integer, got ${v}`);
  return n;
}

export function fuzzConfig(args: Args = {}, env: NodeJS.ProcessEnv = process.env): FuzzConfig {
  const seed = int(args.seed ?? env.GPUEXT_FUZZ_SEED, 'the seed') ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const only = args.only ?? env.GPUEXT_FUZZ_ONLY;
  const device = args.device ?? env.GPUEXT_FUZZ_DEVICE;
  return {
    runs: int(args.runs ?? env.GPUEXT_FUZZ_RUNS, 'the run count') ?? DEFAULT_RUNS,
    seed,
    path: args.path ?? (env.GPUEXT_FUZZ_PATH || undefined),
    only: only ? only.split(',') : undefined,
    strict: args.strict === true || env.GPUEXT_FUZZ_STRICT === '1',
    devices: device ? [device] : ['cpu', 'cuda'],
    requireCuda: env.GPUEXT_REQUIRE_CUDA === '1',
    verbose: args.verbose === true,
  };
}
