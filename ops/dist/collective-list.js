// The one list of gx.distributed's collectives and reduce ops. scripts/gen/collectives.js reads it and writes
//   lib/generated/collectives.ts           ReduceOp, the table every face and backend reads (COLLECTIVES), and the
//                                          typed faces: ProcessGroup's and DeviceGroup's methods, their docs
//   lib/generated/collective-functions.ts  the default group's functions (gx.distributed.allReduce, ...)
//   ops/generated/collectives.h            the kinds NCCL runs as an X-macro, their enum and the name -> kind
//                                          lookup that ops/dist/nccl.cu's dispatch switches on
// so adding a collective is a row here, its body in each backend (lib/distributed/README.md, "Adding a
// collective"), and its test. `npm run gen` after editing; `npm test` fails while the generated files are stale.
'use strict';

// How a collective combines the ranks' values, in the order errors list them.
//   nccl:     its ncclRedOp_t (NCCL's ABI: nccl.h's ncclSum = 0, ncclProd, ncclMax, ncclMin, ncclAvg)
//   boolAs:   the op a bool tensor runs instead (NCCL has no bool type, bools travel as uint8: a sum is a
//             max, a logical or; a product a min, a logical and); every backend applies it
//   floating: only floating tensors may use it (an error names the op and the dtype otherwise)
const REDUCE_OPS = [
  { name: 'sum', nccl: 0, boolAs: 'max' },
  { name: 'prod', nccl: 1, boolAs: 'min' },
  { name: 'min', nccl: 3 },
  { name: 'max', nccl: 2 },
  { name: 'avg', nccl: 4, floating: true },
];

// The collectives, each a method of ProcessGroup, a function on the default group, and (deviceDoc) a method
// of DeviceGroup. Their arguments, in this order (the faces check them in it):
//   the tensors, by layout:
//     inplace  (tensor) one tensor, read and written; DeviceGroup: (tensors), one per device
//     gather   (out, input): out is worldSize blocks of input along the first dimension; DeviceGroup: (outputs, inputs)
//     scatter  (out, input): input is worldSize blocks of out; DeviceGroup: (outputs, inputs)
//     p2p      (tensor), to or from one other rank, `root` naming it (it may not be this rank)
//     none     no tensors
//   root: the argument naming the root rank ('src' or 'dst'); DeviceGroup calls it `root`, default 0
//   reduces: an `op` argument (a ReduceOp, default 'sum')
//   nccl: NCCL runs it (nccl_collective's kind is the name in snake_case); else only the store does
const COLLECTIVES = [
  { name: 'allReduce', layout: 'inplace', reduces: true, nccl: true,
    doc: 'Reduces `tensor` across ranks in place: every rank ends with the result (sum, prod, min, max, avg).',
    deviceDoc: 'Reduces the tensors in place: every device ends with the result.' },
  { name: 'reduce', layout: 'inplace', root: 'dst', reduces: true, nccl: true,
    doc: 'Reduces `tensor` across ranks into rank `dst`\'s `tensor` (the others\' are left as they were).',
    deviceDoc: 'Reduces the tensors into the one of device `root`.' },
  { name: 'broadcast', layout: 'inplace', root: 'src', nccl: true,
    doc: 'Copies rank `src`\'s `tensor` into every rank\'s `tensor`.',
    deviceDoc: 'Copies the tensor of device `root` (a position in devices) into every other.' },
  { name: 'allGather', layout: 'gather', nccl: true,
    doc: 'Gathers every rank\'s `input` into `out`, stacked along the first dimension (all_gather_into_tensor).',
    deviceDoc: 'Every device\'s `outputs[i]` gets all inputs stacked along the first dimension.' },
  { name: 'reduceScatter', layout: 'scatter', reduces: true, nccl: true,
    doc: 'Reduces `input` (worldSize blocks along its first dimension) across ranks; rank r gets block r in `out`.',
    deviceDoc: 'Reduces the inputs (size blocks along the first dimension); device i gets block i.' },
  { name: 'send', layout: 'p2p', root: 'dst', nccl: true,
    doc: 'Sends `tensor` to rank `dst` (its matching recv).' },
  { name: 'recv', layout: 'p2p', root: 'src', nccl: true,
    doc: 'Receives into `tensor` what rank `src` sends.' },
  { name: 'barrier', layout: 'none',
    doc: 'Waits until every rank has reached it.' },
];

module.exports = { REDUCE_OPS, COLLECTIVES };
