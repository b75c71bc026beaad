// gx.jit's intrinsics as PTX: the `ptx` faces of intrinsic-table.ts's
// entries, each computing what the entry's CUDA face computes (thread
// coordinates, barriers, atomics with the helpers' semantics, warp
// operations over the lanes that reach them).
import type { ArrayDecl, Expr } from './ir';
import { classOf, PTX_TYPE, type Out } from './ptx-isa';
import type { ScalarDType } from './types';

/** What the PTX emitter lends an entry's face. */
export interface PtxFace {
  out: Out;
  expr(e: Expr): string;
  /** The address of an element and its state space ('' for a tensor's generic address, '.shared', '.local'). */
  address(a: ArrayDecl, idx: readonly Expr[]): { addr: string; space: string };
}

const SPECIAL = { threadIdx: 'tid', blockIdx: 'ctaid', blockDim: 'ntid', gridDim: 'nctaid' } as const;

/** threadIdx.x and its kin: unsigned 32 bits, widened to int64 for blockIdx and gridDim (as `(long long)blockIdx.x`). */
export function ptxCoordinate(o: Out, what: keyof typeof SPECIAL, axis: string, d: ScalarDType): string {
  const r = o.reg('s32');
  o.ins(`mov.u32 ${r}, %${SPECIAL[what]}.${axis};`);
  if (d !== 'int64') return r;
  const w = o.reg('s64');
  o.ins(`cvt.u64.u32 ${w}, ${r};`);
  return w;
}

/** The lane of the thread in its warp, from its linear index in the block (as the CUDA face computes it). */
export function laneId(o: Out): string {
  const [tx, ty, tz, bx, by] = ['%tid.x', '%tid.y', '%tid.z', '%ntid.x', '%ntid.y'].map((s) => {
    const r = o.reg('s32');
    o.ins(`mov.u32 ${r}, ${s};`);
    return r;
  });
  const r = o.reg('s32');
  o.ins(`mad.lo.u32 ${r}, ${by}, ${tz}, ${ty};`);
  o.ins(`mad.lo.u32 ${r}, ${bx}, ${r}, ${tx};`);
  o.ins(`and.b32 ${r}, ${r}, 31;`);
  return r;
}

const bits = (d: ScalarDType): number => (d === 'int64' || d === 'float64' ? 64 : 32);

/** An atomic on an element (the old value back), with gx_atomic_*'s semantics (cuda-helpers.ts). */
export function atomic(f: PtxFace, op: string, arr: ArrayDecl, idx: readonly Expr[], args: readonly Expr[], d: ScalarDType): string {
  const o = f.out;
  const { addr, space } = f.address(arr, idx);
  const vals = args.map((a) => f.expr(a));
  const t = PTX_TYPE[d as Exclude<ScalarDType, 'bool'>];
  const b = bits(d);
  const r = o.reg(classOf(d));
  const float = d === 'float32' || d === 'float64';
  switch (op) {
    case 'add': case 'sub': {
      let v = vals[0];
      if (op === 'sub') {
        v = o.reg(classOf(d));
        o.ins(`neg.${t} ${v}, ${vals[0]};`);
      }
      o.ins(`atom${space}.add.${float ? t : `u${b}`} ${r}, [${addr}], ${v};`);
      return r;
    }
    case 'min': case 'max':
      if (!float) {
        o.ins(`atom${space}.${op}.${t} ${r}, [${addr}], ${vals[0]};`);
        return r;
      }
      return floatMinMax(o, op, space, addr, vals[0], d);
    case 'exch': o.ins(`atom${space}.exch.b${b} ${r}, [${addr}], ${vals[0]};`); return r;
    case 'cas': o.ins(`atom${space}.cas.b${b} ${r}, [${addr}], ${vals[0]}, ${vals[1]};`); return r;
    case 'and': case 'or': case 'xor': o.ins(`atom${space}.${op}.b${b} ${r}, [${addr}], ${vals[0]};`); return r;
    default: throw new Error(`gpuext internal error: atomic.${op}`);
  }
}

/** A float min / max by compare-and-swap on the bits, leaving the element when `v` is not below (above) it (and on NaN). */
function floatMinMax(o: Out, op: 'min' | 'max', space: string, addr: string, v: string, d: ScalarDType): string {
  const t = PTX_TYPE[d as 'float32' | 'float64'];
  const b = bits(d);
  const ic = b === 64 ? 's64' : 's32';
  const old = o.reg(ic), seen = o.reg(ic), vb = o.reg(ic), cur = o.reg(classOf(d)), r = o.reg(classOf(d));
  const better = o.reg('pred'), again = o.reg('pred');
  const top = o.label(), done = o.label();
  o.ins(`ld${space}.b${b} ${old}, [${addr}];`);
  o.ins(`mov.b${b} ${vb}, ${v};`);
  o.place(top);
  o.ins(`mov.b${b} ${seen}, ${old};`);
  o.ins(`mov.b${b} ${cur}, ${seen};`);
  o.ins(`setp.${op === 'min' ? 'lt' : 'gt'}.${t} ${better}, ${v}, ${cur};`);
  o.ins(`@!${better} bra ${done};`);
  o.ins(`atom${space}.cas.b${b} ${old}, [${addr}], ${seen}, ${vb};`);
  o.ins(`setp.ne.${ic} ${again}, ${old}, ${seen};`);
  o.ins(`@${again} bra ${top};`);
  o.place(done);
  o.ins(`mov.b${b} ${r}, ${old};`);
  return r;
}

/** __shfl_*_sync(__activemask(), v, n): 64-bit values as two 32-bit halves, as CUDA's own overloads do. */
export function shuffle(f: PtxFace, mode: string, value: Expr, lane: Expr): string {
  const o = f.out;
  const v = f.expr(value), n = f.expr(lane);
  const d = value.ty.dtype;
  const mask = o.reg('s32');
  o.ins(`activemask.b32 ${mask};`);
  const kind = mode === 'sync' ? 'idx' : mode === 'xor' ? 'bfly' : mode;
  const clamp = mode === 'up' ? 0 : 31;
  const one = (x: string): string => {
    const r = o.reg('s32');
    o.ins(`shfl.sync.${kind}.b32 ${r}, ${x}, ${n}, ${clamp}, ${mask};`);
    return r;
  };
  if (bits(d) === 32) {
    const w = o.reg('s32');
    o.ins(`mov.b32 ${w}, ${v};`);
    const r = o.reg(classOf(d));
    o.ins(`mov.b32 ${r}, ${one(w)};`);
    return r;
  }
  const lo = o.reg('s32'), hi = o.reg('s32'), r = o.reg(classOf(d));
  o.ins(`mov.b64 {${lo}, ${hi}}, ${v};`);
  const l2 = one(lo), h2 = one(hi);
  o.ins(`mov.b64 ${r}, {${l2}, ${h2}};`);
  return r;
}

/** __ballot_sync(__activemask(), p) or __activemask(), as the int64 of their unsigned bits. */
export function ptxLanes(f: PtxFace, kind: 'ballot' | 'activemask', pred: Expr | undefined): string {
  const o = f.out;
  const mask = o.reg('s32');
  o.ins(`activemask.b32 ${mask};`);
  let bitsReg = mask;
  if (kind === 'ballot' && pred !== undefined) {
    const p = f.expr(pred);
    bitsReg = o.reg('s32');
    o.ins(`vote.sync.ballot.b32 ${bitsReg}, ${p}, ${mask};`);
  }
  const r = o.reg('s64');
  o.ins(`cvt.u64.u32 ${r}, ${bitsReg};`);
  return r;
}
