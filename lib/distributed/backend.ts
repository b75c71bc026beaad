// NOTE [ Backends ]
// gx.distributed is two faces over three backends. The faces, ProcessGroup
// (one tensor per rank, and the default group's functions) and DeviceGroup
// (one tensor per GPU of this process), have their methods generated from
// the collective table (ops/dist/collective-list.js), and each checks a
// call once, in its collective(), by the table's row: the tensors, the
// reduce op, the root, the stacked shapes. What it hands on is a
// CollectiveCall: the row and the arguments in one shape, whatever the
// collective. A backend runs it:
//   StoreBackend       CPU tensors through rank 0's TCP store (store-backend.ts)
//   NcclBackend        CUDA tensors through one NCCL communicator per rank (nccl-backend.ts)
//   NcclDeviceBackend  one communicator per GPU of this process, a collective enqueued
//                      on all of them as one NCCL group (nccl-backend.ts)
// A process group routes each call by its tensors' device: CUDA tensors to
// NCCL, CPU tensors (and barrier, which has none) to the store. The NCCL
// backends run every collective of the table the same way (the row's kind
// goes to ops/dist/nccl.cu, whose dispatch is generated from the same
// table); the store writes a body per collective, which tsc requires.
import { dtypeInfo, type DType } from '../generated/dtypes';
import { REDUCE_OP_INFO, REDUCE_OPS, type Collective, type ReduceOp } from '../generated/collectives';
import type { Tensor } from '../core/tensor';
import type { Work } from './work';

/** One collective call, checked by a face: its row of the table and its arguments, in the shape every backend takes. */
export interface CollectiveCall<T> {
  readonly c: Collective;
  /** The face's name of the call, for errors (gx.distributed.allReduce, DeviceGroup.allReduce). */
  readonly fn: string;
  /** The tensor arguments in the table's order (none for barrier): outputOf and inputOf pick them. */
  readonly tensors: readonly T[];
  /** The reduce op, when the collective takes one. */
  readonly op: ReduceOp | undefined;
  /** The root, or the other rank of send / recv; 0 when the collective has neither. */
  readonly peer: number;
}

/** What a collective writes: `tensor`, or `out` (the first tensor argument). */
export const outputOf = <T>(call: CollectiveCall<T>): T => call.tensors[0];
/** What it reads: `tensor`, or `input` (the last). */
export const inputOf = <T>(call: CollectiveCall<T>): T => call.tensors[call.tensors.length - 1];

/** A transport of collectives: T is what a call's tensors are (a tensor, or one per device). */
export interface Backend<T> {
  /** Starts the collective; its Work resolves when the outputs may be read. Checked arguments only (the faces check). */
  run(call: CollectiveCall<T>): Work;
  /** Frees the transport (waiting for nothing: the face waits for pending work first). */
  destroy(): Promise<void>;
}

/** `op` is a reduce op `dtype` may use; `fn` names the call. */
export function checkOp(op: unknown, fn: string, dtype: DType): asserts op is ReduceOp {
  if (!(REDUCE_OPS as readonly unknown[]).includes(op)) throw new TypeError(`${fn}: op must be one of ${REDUCE_OPS.join(', ')}, got ${String(op)}`);
  if (REDUCE_OP_INFO[op as ReduceOp].floating && dtypeInfo(dtype).kind !== 'f') throw new TypeError(`${fn}: '${String(op)}' needs a floating tensor, got ${dtype}`);
}

/** The op that runs `op` on `dtype`: bools travel as uint8, so a sum is a max (logical or) and a product a min (logical and). */
export const effectiveOp = (op: ReduceOp, dtype: DType): ReduceOp => (dtype === 'bool' ? REDUCE_OP_INFO[op].boolAs : op);

/** `big` is worldSize blocks of `small` along its first dimension. */
export function checkStacked(big: Tensor, small: Tensor, worldSize: number, fn: string): void {
  const want = small.ndim === 0 ? [worldSize] : [small.shape[0] * worldSize, ...small.shape.slice(1)];
  if (big.dtype !== small.dtype || big.shape.join() !== want.join()) {
    throw new TypeError(`${fn}: with ${worldSize} ranks and a block of ${small.dtype} [${small.shape.join(', ')}], the stacked tensor must be ${small.dtype} [${want.join(', ')}], got ${big.dtype} [${big.shape.join(', ')}]`);
  }
}

/** The (out, input) pair of a stacked layout as (big, small), for checkStacked; undefined when the layout stacks nothing. */
export function stacked<T>(c: Collective, tensors: readonly T[]): [T, T] | undefined {
  if (c.layout === 'gather') return [tensors[0], tensors[1]];
  if (c.layout === 'scatter') return [tensors[1], tensors[0]];
  return undefined;
}

/** The call of checked arguments. */
export function callOf<T>(c: Collective, fn: string, tensors: readonly T[], root: number | undefined, op: ReduceOp | undefined): CollectiveCall<T> {
  return { c, fn, tensors, op: c.reduces ? op : undefined, peer: root ?? 0 };
}
