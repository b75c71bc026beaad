#!/usr/bin/env node
// The `gpuext` command line. `gpuext info` reports how the core was built
// and what it sees; more commands arrive with the build toolkit.
import * as gx from '../index';
import { native } from '../native';

const USAGE = `usage: gpuext <command>

commands:
  info     how the core was built (CUDA or CPU-only), GPUs, allocator state
  help     this text`;

function info(): void {
  console.log(`gpuext core: ${native.cudaCompiled ? 'built with CUDA' : 'CPU-only build'}, C ABI ${native.abiVersion.join('.')}`);
  const n = gx.cuda.deviceCount();
  if (n === 0) console.log(`GPUs: none (${gx.cuda.unavailableReason()})`);
  for (let i = 0; i < n; i++) {
    const p = gx.cuda.getDeviceProperties(`cuda:${i}`);
    console.log(`cuda:${i}: ${p.name}, sm_${p.major}${p.minor}, ${p.multiProcessorCount} SMs, ` +
      `${(p.freeMemory / 2 ** 30).toFixed(1)} of ${(p.totalMemory / 2 ** 30).toFixed(1)} GiB free`);
  }
}

function main(argv: string[]): number {
  const [command] = argv;
  switch (command) {
    case 'info':
      info();
      return 0;
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
}

process.exitCode = main(process.argv.slice(2));
