#!/usr/bin/env node
// The `gpuext` command line. Each command lives in its own module, loaded
// only when run: `gpuext build` with nothing to do must not load the native
// core (a no-change rebuild targets 0.3 s).
import { UsageError } from './args';

const USAGE = `usage: gpuext <command> [options]

commands:
  build    compile setup.config.json's sources into <outDir>/<name>.node + typed <name>.js/.d.ts
  init     scaffold an extension project: gpuext init <dir>
  doctor   check nvcc, the host compiler, the driver and GPUs, Node headers and the cache
  clean    remove the build outputs and the object cache
  run      start a script once per rank (gx.distributed), as torchrun: gpuext run --nproc-per-node 2 train.js
  info     how the core was built (CUDA or CPU-only), GPUs, allocator state
  help     this text (gpuext <command> --help for a command's options)
  --version  the package's version`;

async function info(): Promise<number> {
  const gx: typeof import('../index') = require('../index');
  const { native }: typeof import('../core/native') = require('../core/native');
  console.log(`gpuext core: ${native.cudaCompiled ? 'built with CUDA' : 'CPU-only build'}, C ABI ${native.abiVersion.join('.')}`);
  const n = gx.cuda.deviceCount();
  if (n === 0) console.log(`GPUs: none (${gx.cuda.unavailableReason()})`);
  for (let i = 0; i < n; i++) {
    const p = gx.cuda.getDeviceProperties(`cuda:${i}`);
    console.log(`cuda:${i}: ${p.name}, sm_${p.major}${p.minor}, ${p.multiProcessorCount} SMs, ` +
      `${(p.freeMemory / 2 ** 30).toFixed(1)} of ${(p.totalMemory / 2 ** 30).toFixed(1)} GiB free`);
  }
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'build': {
        const m: typeof import('./build') = require('./build');
        return await m.buildCommand(rest);
      }
      case 'init': {
        const m: typeof import('./init') = require('./init');
        return await m.initCommand(rest);
      }
      case 'doctor': {
        const m: typeof import('./doctor') = require('./doctor');
        return await m.doctorCommand(rest);
      }
      case 'clean': {
        const m: typeof import('./clean') = require('./clean');
        return await m.cleanCommand(rest);
      }
      case 'run': {
        const m: typeof import('./run') = require('./run');
        return await m.runCommand(rest);
      }
      case 'info':
        return await info();
      case '--version':
      case '-v':
      case 'version': {
        // The toolchain module reads package.json only: no native core to load.
        const m: typeof import('../toolkit/toolchain') = require('../toolkit/toolchain');
        console.log(m.packageVersion());
        return 0;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return 0;
      default:
        console.error(`gpuext: unknown command '${command}'\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`${e.message}\n(gpuext ${command} --help lists the options)`);
      return 2;
    }
    throw e;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
      process.exitCode = 1;
    },
  );
}
