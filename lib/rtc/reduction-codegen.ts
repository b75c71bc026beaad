// The CUDA source of a gx.reductionKernel plan (NOTE [ Reduction codegen ]):
// from the kernel's definition, the dtypes a call binds and the call's
// coalesced geometry. Pure text: no GPU, no state (reduction.ts caches).
//
// NOTE [ Reduction codegen ]
// A call reduces the broadcast inputs over some axes. In JS, per call, the
// problem is first coalesced: size-1 dims are dropped, the reduced dims are
// ordered by stride (largest outermost: the reduction order is free), and
// adjacent dims merge where every tensor operand is contiguous across them
// (stride[d] == stride[d+1] * shape[d+1]), kept and reduced dims separately.
// What is left is nKept kept dims (the output, contiguous, indexed by `o`)
// and nRed reduced dims (indexed by `j`); a plan, one module, is generated
// per dtype signature and (nKept, nRed, layout, index width), with code
// specialised for nKept = 0 (one output: no output index at all), nKept = 1
// (base = o * stride) and nRed = 1 (offset = base + j * stride, no division);
// more dims decompose the index with / and %.
//
// A block has GX_BLOCK = 256 threads working on S outputs with R = 256 / S
// threads each (powers of two, chosen per call). Layout A puts a thread's
// reduce lane fastest (threads of one output are neighbours: for reductions
// whose innermost reduced stride is the smallest), layout B its output lane
// (S >= 32 consecutive outputs per warp: for reductions over outer dims, the
// kept dim contiguous). Each thread strides over j by R (times G, below),
// loading U elements (8 for 4-byte inputs, more for narrower, fewer for
// wider) before combining them into up to 4 accumulators, so each thread
// keeps several independent loads in flight; the last fewer-than-U elements
// load together too (indices past the end clamped, their values dropped).
// The block then combines: A by warp shuffles (__shfl_down_sync) within the
// R lanes of an output and, for R > 32, once more across the warps through
// shared memory (one __syncthreads); B through shared memory (R <= 8 values
// per output, one __syncthreads). Shared buffers alternate between the
// block's loop iterations so none needs a second sync. Shuffles take any
// reduce type: 1- and 2-byte integers and bool go through int, __half and
// __nv_bfloat16 have overloads in their headers.
//
// The expressions become inline device functions: gx_map(inputs by name),
// gx_reduce(a, b) and gx_post(a, <output by name>, scalar inputs by name),
// with `type_reduce` (and the placeholders) as typedefs before the preamble.
//
// Kernels of a module: `<name>` applies postMapExpr and writes the output
// directly (G == 1: one kernel when the outputs alone give the GPU enough
// blocks, or the reduction is short); `<name>_partial` splits each output's
// reduced range over G blocks (j strides by G * R) into partials of the
// reduce type, and `<name>_final` (a block per output) combines the G
// partials and applies postMapExpr. The split happens when the outputs give
// less than a wave of blocks and each thread would load more than 4 * U
// elements; G is then as large as keeps the partial grid within one wave of
// resident blocks (from the kernel's registers and the SM count: a block
// beyond it would double the time) and each thread at 2 * U elements or more.
// Indices are 32-bit `int` when every size and offset fits in 2^30, else
// `long long`. Parameter lists use concrete C types only (the launcher reads
// them: NOTE [ Kernel arguments ] in raw.ts); JS numbers come in as `double`
// and are converted to their parameter's type once per thread.
//
import type { DType } from '../core/dtype';
import { KERNEL_C_TYPES as C_TYPES } from '../generated/dtypes';
import { numberHelpers, numberLocal, typeHeaders, type Param } from './params';

export const BLOCK = 256;
const LOG_BLOCK = 8;
export const WARPS = BLOCK / 32;
/** Sizes and offsets up to this use 32-bit indices (headroom for j + U * step). */

export type Layout = 'A' | 'B';

/** The coalesced shape of a call, what a plan is specialised on besides dtypes. */
export interface ReductionGeometry {
  nKept: number;
  nRed: number;
  layout: Layout;
  idx32: boolean;
}

/** The text of a kernel definition, what the generator needs besides a signature. */
export interface Definition {
  name: string;
  preamble: string;
  ins: Param[];
  out: Param;
  mapExpr: string;
  reduceExpr: string;
  postMapExpr: string;
  identity: string;
}

/** What the input dtypes decide that the source depends on. */
export interface KernelTypes {
  /** Per input: its dtype (a scalar's declared or bound type). */
  types: DType[];
  /** Per input: a JS number rather than a tensor. */
  scalar: boolean[];
  outType: DType;
  reduceType: DType;
  /** Elements each thread loads per step of its loop. */
  unroll: number;
  /** The placeholders' dtypes (`T` -> float32), typedefs before the preamble. */
  bound: Map<string, DType>;
}

/** The warp shuffle of a reduce type: 1- and 2-byte integers and bool through int, the rest (halves included) as they are. */
function shuffle(t: DType): string {
  switch (t) {
    case 'bool':
    case 'int8':
    case 'uint8':
    case 'int16':
      return '(type_reduce)__shfl_down_sync(0xffffffffu, (int)v, off)';
    default:
      return '__shfl_down_sync(0xffffffffu, v, off)';
  }
}

export function generate(def: Definition, b: KernelTypes, geo: ReductionGeometry): string {
  return new ReductionSource(def, b, geo).module();
}

/** The text of one module: what a definition, a binding and a geometry decide, and the pieces made from them. */
class ReductionSource {
  readonly #def: Definition;
  readonly #b: KernelTypes;
  readonly #nk: number;
  readonly #nr: number;
  readonly #layout: Layout;
  /** The index type. */
  readonly #I: string;
  /** Loads per step (U) and accumulators (A). */
  readonly #U: number;
  readonly #A: number;
  readonly #tensors: Param[];
  readonly #scalars: Param[];
  /** The identity as the reduce type. */
  readonly #id: string;
  readonly #scalarLocals: string[];
  readonly #scalarArgs: string;

  constructor(def: Definition, b: KernelTypes, geo: ReductionGeometry) {
    const { nKept: nk, nRed: nr } = geo;
    if (!(Number.isInteger(nk) && nk >= 0 && Number.isInteger(nr) && nr >= 1)) throw new RangeError(`reduction geometry ${nk} kept, ${nr} reduced dims`);
    const ins = def.ins;
    this.#def = def;
    this.#b = b;
    this.#nk = nk;
    this.#nr = nr;
    this.#layout = geo.layout;
    this.#I = geo.idx32 ? 'int' : 'long long';
    this.#U = b.unroll;
    this.#A = Math.min(b.unroll, 4);
    this.#tensors = ins.filter((_, k) => !b.scalar[k]);
    this.#scalars = ins.filter((_, k) => b.scalar[k]);
    this.#id = `(type_reduce)(${def.identity})`;
    this.#scalarLocals = ins.flatMap((p, k) => (b.scalar[k] ? [numberLocal(b.types[k], p.name)] : []));
    this.#scalarArgs = this.#scalars.map((p) => `, ${p.name}`).join('');
  }

  /** The C type of input k. */
  #C(k: number): string {
    return C_TYPES[this.#b.types[k]];
  }

  /** The module: type headers and typedefs, the expressions as device functions, then the three kernels. */
  module(): string {
    const def = this.#def;
    const b = this.#b;
    const { ins, out, name } = def;
    const I = this.#I;
    const O = C_TYPES[b.outType];
    const R = C_TYPES[b.reduceType];
    // Placeholders become typedefs; parameter lists use concrete C types (the launcher reads them: NOTE [ Kernel arguments ]).
    const typedefs = [...b.bound.entries()].map(([t, d]) => `typedef ${C_TYPES[d]} ${t};\n`).join('');
    const mapParams = ins.map((p, k) => `const ${this.#C(k)} ${p.name}`).join(', ');
    const postParams = [`const type_reduce a`, `${O}& ${out.name}`, ...this.#scalars.map((p) => `const ${this.#C(ins.indexOf(p))} ${p.name}`)].join(', ');
    const kernelHead = (suffix: string, params: string[]): string =>
      `extern "C" __global__ void __launch_bounds__(GX_BLOCK) ${name}${suffix}(${params.join(', ')})`;
    const inParams = this.#inParams();
    const geoParams = this.#geoParams();
    const numbers = numberHelpers(b.types.filter((_, k) => b.scalar[k]));
    return `${typeHeaders([...b.types, b.outType, b.reduceType])}${numbers}${typedefs}typedef ${R} type_reduce;
${def.preamble}
#define GX_BLOCK ${BLOCK}
#define GX_LOG_BLOCK ${LOG_BLOCK}
#define GX_WARPS ${WARPS}
__device__ __forceinline__ type_reduce gx_map(${mapParams}) { return (type_reduce)(${def.mapExpr}); }
__device__ __forceinline__ type_reduce gx_reduce(const type_reduce a, const type_reduce b) { return (type_reduce)(${def.reduceExpr}); }
__device__ __forceinline__ void gx_post(${postParams}) { ${def.postMapExpr}; }
__device__ __forceinline__ type_reduce gx_shfl_down(const type_reduce v, const unsigned off) { return ${shuffle(b.reduceType)}; }

// Reduces the outputs in one pass and applies postMapExpr.
${kernelHead('', [...inParams, `${O}* __restrict__ gx_out`, ...geoParams])} {
${this.#body(false)}
}

// Reduces G chunks of each output's reduced range, one partial each.
${kernelHead('_partial', [...inParams, `${R}* __restrict__ gx_partial`, ...geoParams, `${I} gx_groups`])} {
${this.#body(true)}
}

// Combines each output's G partials and applies postMapExpr.
${kernelHead('_final', [`const ${R}* __restrict__ gx_partial`, `${O}* __restrict__ gx_out`, ...this.#scalars.map((p) => `double ${p.name}_value`), `${I} gx_n_out`, `${I} gx_G`])} {
${indent(this.#finalBody()).join('\n')}
}
`;
  }

  /** Parameters of the inputs: a pointer per tensor, a double per JS number. */
  #inParams(): string[] {
    return this.#def.ins.map((p, k) => (this.#b.scalar[k] ? `double ${p.name}_value` : `const ${this.#C(k)}* __restrict__ ${p.name}_ptr`));
  }

  /** Parameters of the geometry, after the output (the call pushes values in this order). */
  #geoParams(): string[] {
    const I = this.#I;
    const nk = this.#nk;
    const nr = this.#nr;
    const geoParams: string[] = [];
    if (nk > 0) geoParams.push(`${I} gx_n_out`);
    geoParams.push(`${I} gx_n_red`);
    for (let d = 1; d < nk; d++) geoParams.push(`${I} gx_kshape${d}`);
    for (const p of this.#tensors) for (let d = 0; d < nk; d++) geoParams.push(`${I} ${p.name}_kst${d}`);
    for (let d = 1; d < nr; d++) geoParams.push(`${I} gx_rshape${d}`);
    for (const p of this.#tensors) for (let d = 0; d < nr; d++) geoParams.push(`${I} ${p.name}_rst${d}`);
    if (nk > 0) geoParams.push('int gx_r_shift');
    return geoParams;
  }

  /** Index decomposition: `idx` over dims 0..n-1 (shapes `shape1..`, the outermost needs none) into per-tensor offsets. */
  #offsets(idx: string, n: number, shape: string, st: string, into: (p: Param) => string): string[] {
    const tensors = this.#tensors;
    if (n === 1) return tensors.map((p) => `${into(p)} += ${idx} * ${p.name}_${st}0;`);
    const lines = [`{ ${this.#I} gx_rem = ${idx};`];
    for (let d = n - 1; d >= 1; d--) {
      lines.push(`  { const ${this.#I} gx_q = gx_rem % ${shape}${d}; gx_rem /= ${shape}${d};`);
      for (const p of tensors) lines.push(`    ${into(p)} += gx_q * ${p.name}_${st}${d};`);
      lines.push('  }');
    }
    for (const p of tensors) lines.push(`  ${into(p)} += gx_rem * ${p.name}_${st}0;`);
    lines.push('}');
    return lines;
  }

  /** Loads element `j` of every tensor input into `<name>_<u>`; the mapped value is then #mapped(u). */
  #load(j: string, u: number): string[] {
    const ins = this.#def.ins;
    const lines: string[] = [];
    if (this.#nr === 1) {
      for (const p of this.#tensors) lines.push(`const ${this.#C(ins.indexOf(p))} ${p.name}_${u} = ${p.name}_ptr[${p.name}_base + (${j}) * ${p.name}_rst0];`);
      return lines;
    }
    for (const p of this.#tensors) lines.push(`${this.#I} ${p.name}_off${u} = ${p.name}_base;`);
    lines.push(...this.#offsets(`(${j})`, this.#nr, 'gx_rshape', 'rst', (p) => `${p.name}_off${u}`));
    for (const p of this.#tensors) lines.push(`const ${this.#C(ins.indexOf(p))} ${p.name}_${u} = ${p.name}_ptr[${p.name}_off${u}];`);
    return lines;
  }

  #mapped(u: number): string {
    return `gx_map(${this.#def.ins.map((p, k) => (this.#b.scalar[k] ? p.name : `${p.name}_${u}`)).join(', ')})`;
  }

  /** The body of the direct kernel, or of the partial one: lanes and the loop over tasks (an output group, a chunk). */
  #body(partial: boolean): string {
    const I = this.#I;
    const nk = this.#nk;
    const layout = this.#layout;
    const L: string[] = [];
    L.push(layout === 'A' ? 'const int gx_tid = threadIdx.x, gx_lane = gx_tid & 31, gx_warp = gx_tid >> 5;' : 'const int gx_tid = threadIdx.x;');
    L.push(...this.#scalarLocals);
    if (nk === 0) {
      L.push(`const ${I} gx_n_out = 1;`, 'const int gx_R = GX_BLOCK, gx_S = 1, gx_r_lane = gx_tid, gx_o_lane = 0;');
    } else if (layout === 'A') {
      L.push('const int gx_R = 1 << gx_r_shift, gx_S = GX_BLOCK >> gx_r_shift;', 'const int gx_r_lane = gx_tid & (gx_R - 1), gx_o_lane = gx_tid >> gx_r_shift;');
    } else {
      L.push('const int gx_R = 1 << gx_r_shift, gx_S = GX_BLOCK >> gx_r_shift;', 'const int gx_o_lane = gx_tid & (gx_S - 1), gx_r_lane = gx_tid >> (GX_LOG_BLOCK - gx_r_shift);');
    }
    L.push(`const ${I} gx_G = ${partial ? 'gx_groups' : '1'};`);
    L.push(`const ${I} gx_n_tasks = (gx_n_out + gx_S - 1) / gx_S * gx_G;`);
    L.push(`const ${I} gx_step = gx_G * gx_R;`);
    const smem = layout === 'A' ? 'GX_WARPS' : 'GX_BLOCK';
    L.push(`__shared__ type_reduce gx_smem[2][${smem}];`, 'int gx_buf = 0;');
    L.push(`for (${I} gx_task = blockIdx.x; gx_task < gx_n_tasks; gx_task += gridDim.x) {`);
    L.push(...indent(this.#task(partial)), '}');
    return indent(L).join('\n');
  }

  /** One task: its accumulators, the loads, then the block's combine and the write. */
  #task(partial: boolean): string[] {
    const I = this.#I;
    const A = this.#A;
    const T: string[] = [];
    T.push(partial ? `const ${I} gx_og = gx_task / gx_G, gx_c = gx_task - gx_og * gx_G;` : `const ${I} gx_og = gx_task, gx_c = 0;`);
    T.push(`const ${I} gx_o = gx_og * gx_S + gx_o_lane;`);
    for (let a = 0; a < A; a++) T.push(`type_reduce gx_acc${a} = ${this.#id};`);
    T.push('if (gx_o < gx_n_out) {');
    T.push(...indent(this.#accumulate()), '}');
    T.push(`type_reduce gx_acc = ${A === 1 ? 'gx_acc0' : A === 2 ? 'gx_reduce(gx_acc0, gx_acc1)' : 'gx_reduce(gx_reduce(gx_acc0, gx_acc1), gx_reduce(gx_acc2, gx_acc3))'};`);
    const emit = (o: string, v: string): string =>
      (partial ? `gx_partial[(long long)(${o}) * gx_G + gx_c] = ${v};` : `gx_post(${v}, gx_out[${o}]${this.#scalarArgs});`);
    T.push(...(this.#layout === 'A' ? this.#combineA(emit) : this.#combineB(emit)));
    return T;
  }

  /** A thread's loop over its reduced elements: U loads issued before any is combined, then the tail. */
  #accumulate(): string[] {
    const I = this.#I;
    const U = this.#U;
    const A = this.#A;
    const W: string[] = [];
    for (const p of this.#tensors) W.push(`${I} ${p.name}_base = 0;`);
    if (this.#nk > 0) W.push(...this.#offsets('gx_o', this.#nk, 'gx_kshape', 'kst', (p) => `${p.name}_base`));
    W.push(`${I} gx_j = gx_c * gx_R + gx_r_lane;`);
    W.push(`for (; gx_j + ${U - 1} * gx_step < gx_n_red; gx_j += ${U} * gx_step) {`);
    const M: string[] = [];
    for (let u = 0; u < U; u++) M.push(...this.#load(u === 0 ? 'gx_j' : `gx_j + ${u} * gx_step`, u));
    for (let u = 0; u < U; u++) M.push(`gx_acc${u % A} = gx_reduce(gx_acc${u % A}, ${this.#mapped(u)});`);
    W.push(...indent(M), '}');
    W.push('if (gx_j < gx_n_red) {', ...indent(this.#tail()), '}');
    return W;
  }

  /**
   * Fewer than U left. Loads past the end read element gx_j again and are not
   * combined: no load waits behind a branch, all are in flight at once.
   */
  #tail(): string[] {
    const I = this.#I;
    const U = this.#U;
    const A = this.#A;
    const tail: string[] = [];
    for (let u = 1; u < U - 1; u++) tail.push(`const ${I} gx_j${u} = gx_j + ${u} * gx_step < gx_n_red ? gx_j + ${u} * gx_step : gx_j;`);
    for (let u = 0; u < U - 1; u++) tail.push(...this.#load(u === 0 ? 'gx_j' : `gx_j${u}`, u));
    tail.push(`gx_acc0 = gx_reduce(gx_acc0, ${this.#mapped(0)});`);
    for (let u = 1; u < U - 1; u++) tail.push(`gx_acc${u % A} = gx_reduce(gx_acc${u % A}, gx_j + ${u} * gx_step < gx_n_red ? ${this.#mapped(u)} : ${this.#id});`);
    return tail;
  }

  /** Layout A's combine: the R lanes of an output are neighbours. */
  #combineA(emit: (o: string, v: string) => string): string[] {
    return [
      '// The R lanes of an output are neighbours: shuffles within a warp, then across the warps of an output.',
      'for (int gx_off = (gx_R < 32 ? gx_R : 32) >> 1; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
      'if (gx_R <= 32) {',
      `  if (gx_r_lane == 0 && gx_o < gx_n_out) ${emit('gx_o', 'gx_acc')}`,
      '} else {',
      '  if (gx_lane == 0) gx_smem[gx_buf][gx_warp] = gx_acc;',
      '  __syncthreads();',
      '  if (gx_warp == 0) {',
      '    const int gx_wpo = gx_R >> 5;  // warps per output',
      `    type_reduce gx_v = gx_lane < GX_WARPS ? gx_smem[gx_buf][gx_lane] : ${this.#id};`,
      '    for (int gx_off = gx_wpo >> 1; gx_off > 0; gx_off >>= 1) gx_v = gx_reduce(gx_v, gx_shfl_down(gx_v, gx_off));',
      `    const ${this.#I} gx_o2 = gx_og * gx_S + gx_lane / gx_wpo;`,
      `    if (gx_lane < GX_WARPS && (gx_lane & (gx_wpo - 1)) == 0 && gx_o2 < gx_n_out) ${emit('gx_o2', 'gx_v')}`,
      '  }',
      '  gx_buf ^= 1;',
      '}',
    ];
  }

  /** Layout B's combine: outputs side by side. */
  #combineB(emit: (o: string, v: string) => string): string[] {
    return [
      '// Outputs side by side (S >= 32): the R <= 8 values of output gx_tid through shared memory.',
      'if (gx_R > 1) {',
      '  gx_smem[gx_buf][gx_tid] = gx_acc;',
      '  __syncthreads();',
      '  if (gx_tid < gx_S) for (int gx_k = 1; gx_k < gx_R; gx_k++) gx_acc = gx_reduce(gx_acc, gx_smem[gx_buf][gx_tid + gx_k * gx_S]);',
      '  gx_buf ^= 1;',
      '}',
      `if (gx_tid < gx_S && gx_o < gx_n_out) ${emit('gx_o', 'gx_acc')}`,
    ];
  }

  /** The final kernel's body: a block per output combines its G partials. */
  #finalBody(): string[] {
    const I = this.#I;
    const id = this.#id;
    return [
      'const int gx_tid = threadIdx.x, gx_lane = gx_tid & 31, gx_warp = gx_tid >> 5;',
      ...this.#scalarLocals,
      '__shared__ type_reduce gx_smem[2][GX_WARPS];',
      'int gx_buf = 0;',
      `for (${I} gx_o = blockIdx.x; gx_o < gx_n_out; gx_o += gridDim.x) {`,
      '  const type_reduce* gx_p = gx_partial + (long long)gx_o * gx_G;',
      `  type_reduce gx_acc = ${id};`,
      `  for (${I} gx_g = gx_tid; gx_g < gx_G; gx_g += blockDim.x) gx_acc = gx_reduce(gx_acc, gx_p[gx_g]);`,
      '  for (int gx_off = 16; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
      '  if (blockDim.x > 32) {',
      '    if (gx_lane == 0) gx_smem[gx_buf][gx_warp] = gx_acc;',
      '    __syncthreads();',
      '    if (gx_warp == 0) {',
      `      gx_acc = gx_lane < (int)(blockDim.x >> 5) ? gx_smem[gx_buf][gx_lane] : ${id};`,
      '      for (int gx_off = GX_WARPS >> 1; gx_off > 0; gx_off >>= 1) gx_acc = gx_reduce(gx_acc, gx_shfl_down(gx_acc, gx_off));',
      '    }',
      '    gx_buf ^= 1;',
      '  }',
      `  if (gx_tid == 0) gx_post(gx_acc, gx_out[gx_o]${this.#scalarArgs});`,
      '}',
    ];
  }
}

function indent(lines: string[]): string[] {
  return lines.map((l) => `  ${l}`);
}
