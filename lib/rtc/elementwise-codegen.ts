// The CUDA source of an elementwise kernel (NOTE [ Elementwise codegen ] in
// elementwise.ts) and its launch size. Two shapes of kernel:
//   tiled     every tensor operand contiguous at the full shape (or raw): a
//             block takes a tile of THREADS x VEC x UNROLL elements; with
//             every pointer aligned, each thread moves UNROLL 16-byte vectors
//             of the widest operand per operand (NOTE [ Vectorized
//             elementwise kernels ]), else, and in the last partial tile,
//             one element per thread per step, coalesced;
//   strided   some operand broadcast or strided: a grid-stride loop, one
//             element per thread, offsets computed from the linear index.
//
// NOTE [ Vectorized elementwise kernels ]
// What the built-in elementwise kernels do (ops/common/cuda_loops.cuh:
// ew_vec_kernel): 256 threads per block, 16-byte loads and stores of
// contiguous aligned operands. VEC is 16 bytes over the widest operand's
// element size (float32: 4, float64: 2, a uint8 / bool-only kernel: 16), so
// the widest operand moves whole 16-byte vectors and the narrower ones
// VEC-element vectors of their own size (a float64 -> bool kernel stores 2
// bytes per vector), as PyTorch sizes its vectors. UNROLL = 2 vectors per
// thread per operand keeps 32 bytes of each operand in flight per thread
// (Triton's 1-d pointwise default for large sizes: 8 float32 per thread),
// which a GPU with the H200's bandwidth needs to hide its latency. The
// alignment is tested in the kernel (a view at an odd offset takes the
// element path, same results), so one kernel serves every offset. A tile
// walks the grid (grid-stride over tiles) when there are more than MAX_GRID.
import { DTYPE_INFO, KERNEL_C_TYPES as C_TYPES, type DType } from '../generated/dtypes';
import { numberHelpers, numberLocal, typeHeaders, type Param } from './params';
import { builtinParam, type KernelParam } from './signature';

/** How an operand is passed (NOTE [ Elementwise codegen ]). */
export type Layout = 'c' | 's' | 'v' | 'r';

export const THREADS = 256;
/** Vectors per thread per operand in the tiled kernel. */
export const UNROLL = 2;
/** The strided kernel's grid bound: beyond it the grid-stride loop takes over (one element per thread below it measured best). */
const MAX_BLOCKS = 65535 * 32;
/** The tiled kernel's: the most blocks a 1-d grid has. */
const MAX_GRID = 2 ** 31 - 1;

/**
 * The kernel a call gets: tiled when no tensor operand is strided and some
 * tensor is contiguous, and the body has no `return` (which would skip a
 * whole vector's stores; `continue` and `break` leave the element, as in the
 * grid-stride loop, through the do { } while (0) around the body).
 */
export function isTiled(layouts: readonly Layout[], body = ''): boolean {
  return !layouts.includes('s') && layouts.includes('c') && !/\breturn\b/.test(body);
}

/** Elements per vector: 16 bytes of the widest contiguous operand. */
export function vectorWidth(layouts: readonly Layout[], types: readonly DType[]): number {
  let widest = 1;
  layouts.forEach((l, k) => {
    if (l === 'c') widest = Math.max(widest, DTYPE_INFO[types[k]].itemsize);
  });
  return Math.max(1, Math.floor(16 / widest));
}

/** Launch geometry: elements per block and the grid bound, by the kernel's shape. */
export interface Geometry {
  perBlock: number;
  maxBlocks: number;
}

export function geometryOf(layouts: readonly Layout[], types: readonly DType[], body = ''): Geometry {
  if (!isTiled(layouts, body)) return { perBlock: THREADS, maxBlocks: MAX_BLOCKS };
  return { perBlock: THREADS * vectorWidth(layouts, types) * UNROLL, maxBlocks: MAX_GRID };
}

/** The grid size of a launch over `n` elements. */
export function blocksFor(n: number, g: Geometry): number {
  return Math.min(Math.ceil(n / g.perBlock), g.maxBlocks);
}

export interface ElementwiseSourceIn {
  name: string;
  preamble: string;
  body: string;
  /** How many of `all` are inputs. */
  nIn: number;
  all: readonly Param[];
  types: readonly DType[];
  /** Placeholder type names bound to dtypes. */
  bound: ReadonlyMap<string, DType>;
  ndim: number;
  layouts: readonly Layout[];
  /** Per output: the caller passed it, so the body may read it (the tiled kernel loads it before the body). */
  outputPassed: readonly boolean[];
}

/** A parameter of the kernel: RawKernel's reading of its declaration, and the C type it points to or holds, unqualified. */
export interface ElementwiseParam extends KernelParam {
  base: string;
}

// Each read as signature.ts reads its declaration (builtinParam): the type's spelling and kind are the parser's.
const pointerParam = (base: string, name: string, isConst: boolean): ElementwiseParam =>
  ({ ...builtinParam(base, name, { const: isConst, pointer: true, restrict: true }), base });
const scalarParam = (base: string, name: string): ElementwiseParam => ({ ...builtinParam(base, name), base });

/**
 * The kernel's parameters, in order (`const float* __restrict__ a0_ptr`):
 * what elementwiseSource declares, what the launcher is given (RawKernel
 * takes them as read, parsing nothing on a first call) and what the PTX
 * entry declares (lib/jit/ptx-elementwise.ts).
 */
export function elementwiseParams(g: ElementwiseSourceIn): ElementwiseParam[] {
  const params: ElementwiseParam[] = [];
  g.all.forEach((p, k) => {
    const c = C_TYPES[g.types[k]];
    const isConst = k < g.nIn;
    if (g.layouts[k] === 'v') params.push(scalarParam('double', `${p.name}_value`));
    else if (g.layouts[k] === 'r') params.push(pointerParam(c, p.name, isConst), scalarParam('long long', `${p.name}_size`));
    else params.push(pointerParam(c, `${p.name}_ptr`, isConst));
  });
  params.push(scalarParam('long long', 'n'));
  // Strided operands (never in a tiled kernel): the shape, then each one's strides.
  const strided = g.all.filter((_, k) => g.layouts[k] === 's');
  if (strided.length > 0) {
    for (let d = 0; d < g.ndim; d++) params.push(scalarParam('long long', `shape${d}`));
    for (const p of strided) for (let d = 0; d < g.ndim; d++) params.push(scalarParam('long long', `${p.name}_stride${d}`));
  }
  return params;
}

/** The kernel's source: concrete C types everywhere, placeholders resolved. */
export function elementwiseSource(g: ElementwiseSourceIn): string {
  const params = elementwiseParams(g).map((p) => `${p.type} ${p.name}`);
  // The v (number) operands' locals.
  const lines = g.all.flatMap((p, k) => (g.layouts[k] === 'v' ? [numberLocal(g.types[k], p.name)] : []));
  // Placeholders must be declared before the parameter list uses them.
  const typedefs = [...g.bound.entries()].map(([t, d]) => `typedef ${C_TYPES[d]} ${t};`).join('\n');
  const numbers = numberHelpers(g.types.filter((_, k) => g.layouts[k] === 'v'));
  const head = `${typeHeaders(g.types)}${numbers}${typedefs}\n${g.preamble}\n`;
  if (isTiled(g.layouts, g.body)) return head + tiledKernel(g, params, lines);
  return head + stridedKernel(g, params, lines);
}

function stridedKernel(g: ElementwiseSourceIn, params: string[], lines: string[]): string {
  const strided = g.all.filter((_, k) => g.layouts[k] === 's');
  const index: string[] = [];
  if (strided.length > 0) {
    index.push('long long rem = i;');
    for (const p of strided) index.push(`long long ${p.name}_off = 0;`);
    for (let d = g.ndim - 1; d >= 0; d--) {
      index.push(`{ const long long idx = rem % shape${d}; rem /= shape${d};`);
      for (const p of strided) index.push(`  ${p.name}_off += idx * ${p.name}_stride${d};`);
      index.push('}');
    }
  }
  const refs: string[] = [];
  g.all.forEach((p, k) => {
    if (g.layouts[k] !== 'c' && g.layouts[k] !== 's') return;
    const c = C_TYPES[g.types[k]];
    const at = g.layouts[k] === 's' ? `${p.name}_off` : 'i';
    refs.push(k >= g.nIn ? `${c}& ${p.name} = ${p.name}_ptr[${at}];` : `const ${c} ${p.name} = ${p.name}_ptr[${at}];`);
  });
  return `extern "C" __global__ void ${g.name}(${params.join(', ')}) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    ${[...index, ...lines, ...refs].join('\n    ')}
    ${g.body};
  }
}
`;
}

/** NOTE [ Vectorized elementwise kernels ]. */
function tiledKernel(g: ElementwiseSourceIn, params: string[], lines: string[]): string {
  const vec = vectorWidth(g.layouts, g.types);
  const tile = THREADS * vec * UNROLL;
  const ops = g.all.map((p, k) => ({ p, k, c: C_TYPES[g.types[k]], out: k >= g.nIn, size: DTYPE_INFO[g.types[k]].itemsize }))
    .filter((o) => g.layouts[o.k] === 'c');
  const aligned = ops.map((o) => `((unsigned long long)${o.p.name}_ptr & ${vec * o.size - 1}ULL) == 0`).join(' && ');
  const vt = (o: { c: string }): string => `gx_ew_vec<${o.c}, ${vec}>`;
  const vecRef = (o: (typeof ops)[number]): string => `*reinterpret_cast<${o.out ? '' : 'const '}${vt(o)}*>(${o.p.name}_ptr + gx_at)`;
  const loads = ops.filter((o) => !o.out || g.outputPassed[o.k - g.nIn]).map((o) => `${o.p.name}_v[gx_u] = ${vecRef(o)};`);
  const stores = ops.filter((o) => o.out).map((o) => `${vecRef(o)} = ${o.p.name}_v[gx_u];`);
  const vecElem = ops.map((o) => (o.out ? `${o.c}& ${o.p.name} = ${o.p.name}_v[gx_u].v[gx_j];` : `const ${o.c} ${o.p.name} = ${o.p.name}_v[gx_u].v[gx_j];`));
  const oneElem = ops.map((o) => (o.out ? `${o.c}& ${o.p.name} = ${o.p.name}_ptr[i];` : `const ${o.c} ${o.p.name} = ${o.p.name}_ptr[i];`));
  const ind = (n: number, xs: string[]): string => xs.map((x) => `${' '.repeat(n)}${x}`).join('\n');
  return `#ifndef GX_EW_VEC
#define GX_EW_VEC
template <typename T, int N> struct alignas(sizeof(T) * N) gx_ew_vec { T v[N]; };
#endif
extern "C" __global__ void __launch_bounds__(${THREADS}) ${g.name}(${params.join(', ')}) {
${ind(2, lines)}
  // NOTE [ Vectorized elementwise kernels ]: ${THREADS} threads x ${UNROLL} vectors of ${vec} elements per tile.
  const bool gx_aligned = ${aligned};
  for (long long gx_base = (long long)blockIdx.x * ${tile}LL; gx_base < n; gx_base += (long long)gridDim.x * ${tile}LL) {
    if (gx_aligned && gx_base + ${tile}LL <= n) {
${ind(6, ops.map((o) => `${vt(o)} ${o.p.name}_v[${UNROLL}];`))}
      #pragma unroll
      for (int gx_u = 0; gx_u < ${UNROLL}; ++gx_u) {
        const long long gx_at = gx_base + (long long)(gx_u * ${THREADS} + (int)threadIdx.x) * ${vec};
${ind(8, loads)}
      }
      #pragma unroll
      for (int gx_u = 0; gx_u < ${UNROLL}; ++gx_u) {
        #pragma unroll
        for (int gx_j = 0; gx_j < ${vec}; ++gx_j) {
          const long long i = gx_base + (long long)(gx_u * ${THREADS} + (int)threadIdx.x) * ${vec} + gx_j;
          (void)i;
${ind(10, vecElem)}
          do { ${g.body}; } while (0);
        }
      }
      #pragma unroll
      for (int gx_u = 0; gx_u < ${UNROLL}; ++gx_u) {
        const long long gx_at = gx_base + (long long)(gx_u * ${THREADS} + (int)threadIdx.x) * ${vec};
${ind(8, stores)}
      }
    } else {
      for (int gx_u = 0; gx_u < ${vec * UNROLL}; ++gx_u) {
        const long long i = gx_base + (long long)gx_u * ${THREADS} + threadIdx.x;
        if (i >= n) break;
${ind(8, oneElem)}
        do { ${g.body}; } while (0);
      }
    }
  }
}
`;
}
