// CPU linear algebra benchmark (issue 13): gx.matmul on the CPU through the
// system BLAS (when one loads) and through the built-in kernel, and
// gx.linalg.svd through LAPACK and through the Jacobi SVD, side by side with
// NumPy in one run (bench/numpy_linalg_cpu.py). n x n @ n x n for n in
// GPUEXT_BENCH_SIZES (default 256,512,1024), float32 and float64.
//
//   npx tsc -p tsconfig.json && node dist/bench/matmul_cpu.bench.js
//
// Timing: medians of REPEAT calls after 3 warm-up calls, each call allocating
// its result (as NumPy's a @ b does). The two paths are switched in one
// process (setCpuBlasEnabled), so both see the same machine state.
// Targets (issue 13): 1024 float32 within 2x NumPy without a BLAS, 1.1x with one.
import * as gx from '../lib';
import { setCpuBlasEnabled } from '../lib/ops/backends';
import { fmt, median, numField, printTable, progress, recField, runPythonJson, section, strField } from './util';

const SIZES = (process.env.GPUEXT_BENCH_SIZES ?? '256,512,1024').split(',').map(Number);
const DTYPES = ['float32', 'float64'] as const;
const REPEAT = Number(process.env.GPUEXT_BENCH_REPEAT ?? 11);
const SVDS: [number, number, 'float32' | 'float64'][] = [[256, 256, 'float64'], [512, 256, 'float32']];

function medianMs(fn: () => void, repeat: number, warmup: number): number {
  for (let i = 0; i < warmup; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

function timeMatmul(n: number, dtype: 'float32' | 'float64'): number {
  using a = gx.randn([n, n], { dtype });
  using b = gx.randn([n, n], { dtype });
  return medianMs(() => gx.matmul(a, b).dispose(), REPEAT, 3);
}

function timeSvd(m: number, n: number, dtype: 'float32' | 'float64'): number {
  using a = gx.randn([m, n], { dtype });
  return medianMs(() => {
    const r = gx.linalg.svd(a, { fullMatrices: false });
    r.U.dispose();
    r.S.dispose();
    r.Vh.dispose();
  }, 3, 1);
}

function main(): void {
  const info = gx.backends().cpu;
  section('CPU matmul and SVD vs NumPy');
  console.log(`BLAS: ${info.blas}`);
  console.log(`LAPACK: ${info.lapack}`);
  console.log(`built-in GEMM kernel: ${info.gemmKernel}; threads: GPUEXT_NUM_THREADS=${process.env.GPUEXT_NUM_THREADS ?? '(all cores)'}`);
  const haveBlas = !info.blas.startsWith('built-in');
  const gxBlas = new Map<string, number>();
  const gxBuiltin = new Map<string, number>();
  for (const n of SIZES) {
    for (const dtype of DTYPES) {
      const key = `${n} ${dtype}`;
      if (haveBlas) {
        progress(`gx matmul ${key} (BLAS)`);
        gxBlas.set(key, timeMatmul(n, dtype));
      }
      progress(`gx matmul ${key} (built-in)`);
      setCpuBlasEnabled(false);
      try {
        gxBuiltin.set(key, timeMatmul(n, dtype));
      } finally {
        setCpuBlasEnabled(true);
      }
    }
  }
  const svdLapack = new Map<string, number>();
  const svdJacobi = new Map<string, number>();
  for (const [m, n, dtype] of SVDS) {
    const key = `${m}x${n} ${dtype}`;
    if (!info.lapack.startsWith('built-in')) {
      progress(`gx svd ${key} (LAPACK)`);
      svdLapack.set(key, timeSvd(m, n, dtype));
    }
    progress(`gx svd ${key} (Jacobi)`);
    setCpuBlasEnabled(false);
    try {
      svdJacobi.set(key, timeSvd(m, n, dtype));
    } finally {
      setCpuBlasEnabled(true);
    }
  }
  progress('numpy');
  const spec = { matmul: SIZES.flatMap((n) => DTYPES.map((d) => [n, d])), svd: SVDS, repeat: REPEAT };
  const py = runPythonJson('bench/numpy_linalg_cpu.py', [JSON.stringify(spec)], 600_000);
  const np = py.ok ? py.o : undefined;
  if (!py.ok) console.log(`NumPy: not run (${py.error})`);
  else console.log(`NumPy ${strField(np, 'numpy') ?? '?'} with ${strField(np, 'blas') ?? '?'}`);
  const npMatmul = recField(np, 'matmul');
  const npSvd = recField(np, 'svd');
  const rows: string[][] = [];
  for (const [key, builtin] of gxBuiltin) {
    const ref = numField(npMatmul, key);
    const blas = gxBlas.get(key);
    const n = Number(key.split(' ')[0]);
    const gflops = (ms: number | undefined): string => (ms === undefined ? '-' : fmt((2 * n ** 3) / (ms * 1e6), 1));
    rows.push([key, fmt(ref), fmt(blas), blas !== undefined && ref !== undefined ? `${fmt(blas / ref, 2)}x` : '-',
      fmt(builtin), ref !== undefined ? `${fmt(builtin / ref, 2)}x` : '-', gflops(ref), gflops(blas), gflops(builtin)]);
  }
  section('matmul n x n @ n x n, median ms (ratio: gx time / NumPy time)');
  printTable(['case', 'numpy', 'gx BLAS', 'ratio', 'gx built-in', 'ratio', 'GFLOP/s np', 'gx BLAS', 'gx built-in'], rows);
  const svdRows: string[][] = [];
  for (const [key, jacobi] of svdJacobi) {
    const ref = numField(npSvd, key);
    const lapack = svdLapack.get(key);
    svdRows.push([key, fmt(ref), fmt(lapack), lapack !== undefined && ref !== undefined ? `${fmt(lapack / ref, 2)}x` : '-',
      fmt(jacobi), ref !== undefined ? `${fmt(jacobi / ref, 2)}x` : '-']);
  }
  section('svd (fullMatrices: false), median ms');
  printTable(['case', 'numpy', 'gx LAPACK', 'ratio', 'gx Jacobi', 'ratio'], svdRows);
}

main();
