// gx.distributed's collective table (ops/dist/collective-list.js) and the
// faces and backends made from it, without a GPU: the C++ dispatch's kinds
// (compiled here with the host compiler) are the TypeScript rows' ncclKind,
// in order; every row has its method on ProcessGroup and its function on
// the default group, and DeviceGroup has exactly the rows marked for it;
// each face hands a backend one CollectiveCall of the row's shape, and a bad
// argument is an error naming the call and the argument; the reduce ops'
// NCCL codes and bool mapping; bool tensors reduced through the store as
// NCCL reduces them (sum = or, prod = and).
import test from 'ava';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import * as gx from '../lib';
import { freePort } from '../lib/cli/run';
import type { Backend, CollectiveCall } from '../lib/distributed/backend';
import { DeviceGroup } from '../lib/distributed/device-group';
import { createProcessGroup, type ProcessGroup } from '../lib/distributed/group';
import { ncclArgs } from '../lib/distributed/nccl-backend';
import { Work } from '../lib/distributed/work';
import { COLLECTIVES, REDUCE_OPS, type Collective } from '../lib/generated/collectives';
import { detectToolchain, requireCxx } from '../lib/toolkit/toolchain';
import { rng } from './rng';

const root = path.resolve(__dirname, '../..');
const ROWS: readonly Collective[] = Object.values(COLLECTIVES);

test('the C++ dispatch reads the same table: its kinds are the rows\' ncclKind, in order, and nothing else parses', (t) => {
  const src = `#include <cstdio>
#include "collectives.h"
int main(int argc, char** argv) {
#define GX_PRINT(Enum, name) std::printf("%s %d\\n", #name, static_cast<int>(gx::ops::collectives::Kind::k##Enum));
  GX_FORALL_NCCL_COLLECTIVES(GX_PRINT)
  for (int i = 1; i < argc; ++i) {
    gx::ops::collectives::Kind k{};
    std::printf("parse %s %d\\n", argv[i], gx::ops::collectives::parse_kind(argv[i], &k) ? static_cast<int>(k) : -1);
  }
}
`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-collectives-'));
  fs.writeFileSync(path.join(dir, 'kinds.cpp'), src);
  const [cxx, ...pre] = requireCxx(detectToolchain());
  const exe = path.join(dir, 'kinds');
  execFileSync(cxx, [...pre, '-std=c++17', `-I${path.join(root, 'ops/generated')}`, path.join(dir, 'kinds.cpp'), '-o', exe]);
  const kinds = ROWS.flatMap((c) => (c.ncclKind === undefined ? [] : [c.ncclKind]));
  const others = [...ROWS.filter((c) => c.ncclKind === undefined).map((c) => c.name), 'bogus', 'allReduce', ''];
  const lines = execFileSync(exe, [...kinds, ...others], { encoding: 'utf8' }).trim().split('\n');
  t.deepEqual(lines.slice(0, kinds.length), kinds.map((k, i) => `${k} ${i}`), 'the X-macro lists the rows NCCL runs, in order');
  t.deepEqual(lines.slice(kinds.length), [...kinds.map((k, i) => `parse ${k} ${i}`), ...others.map((o) => `parse ${o} -1`)]);
  t.true(kinds.length >= 7 && COLLECTIVES.barrier.ncclKind === undefined, 'barrier runs on the store only');
});

test('every row has its ProcessGroup method and default-group function; DeviceGroup has exactly the rows marked for it', (t) => {
  for (const c of ROWS) {
    const f: unknown = Reflect.get(gx.distributed, c.name);
    t.is(typeof Reflect.get(gx.distributed.ProcessGroup.prototype, c.name), 'function', `ProcessGroup.${c.name}`);
    t.is(typeof f, 'function', `gx.distributed.${c.name}`);
    t.is(typeof Reflect.get(gx.distributed.DeviceGroup.prototype, c.name), c.deviceTensors === undefined ? 'undefined' : 'function', `DeviceGroup.${c.name}`);
    t.throws(() => (f as () => unknown)(), { message: `gx.distributed.${c.name}: no process group; call await gx.distributed.initProcessGroup() first` });
  }
});

test('the reduce ops: ncclRedOp_t codes as nccl.h numbers them, bools as NCCL reduces them (uint8: sum = max, prod = min)', (t) => {
  // nccl.h: ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4.
  const nccl = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 };
  const call = (op: gx.distributed.ReduceOp): CollectiveCall<gx.Tensor> => ({ c: COLLECTIVES.allReduce, fn: 'f', tensors: [], op, peer: 0 });
  t.deepEqual([...REDUCE_OPS], ['sum', 'prod', 'min', 'max', 'avg']);
  for (const op of REDUCE_OPS) t.is(ncclArgs(call(op), 'float32').op, nccl[op], `${op} float32`);
  t.deepEqual(['sum', 'prod', 'min', 'max'].map((op) => ncclArgs(call(op as gx.distributed.ReduceOp), 'bool').op), [2, 3, 3, 2]);
  t.deepEqual(ncclArgs({ c: COLLECTIVES.broadcast, fn: 'f', tensors: [], op: undefined, peer: 3 }, 'int32'), { kind: 'broadcast', op: 0, peer: 3 });
  t.throws(() => ncclArgs({ c: COLLECTIVES.barrier, fn: 'gx.distributed.barrier', tensors: [], op: undefined, peer: 0 }, 'uint8'), { message: /gx.distributed.barrier: NCCL has no barrier/ });
});

/** A backend that records what the face hands it. */
class Recording implements Backend<gx.Tensor[]> {
  readonly calls: CollectiveCall<gx.Tensor[]>[] = [];
  run(call: CollectiveCall<gx.Tensor[]>): Work {
    this.calls.push(call);
    return new Work(Promise.resolve());
  }
  destroy(): Promise<void> {
    return Promise.resolve();
  }
}

test('DeviceGroup: each row reaches the backend as one call of its shape (defaults root 0, op sum); bad arguments name the method and argument', (t) => {
  const random = rng(35);
  const backend = new Recording();
  const cpu = new gx.Device('cpu');
  const g = new DeviceGroup([cpu, cpu], backend);
  const per = (n: number, dtype: gx.DType = 'float32'): gx.Tensor[] => [0, 1].map(() => gx.tensor(Array.from({ length: n }, () => random() - 0.5), { dtype }));
  const methods = (name: string): ((...a: unknown[]) => Work) => Reflect.get(g, name) as (...a: unknown[]) => Work;
  for (const c of ROWS.filter((r) => r.deviceTensors !== undefined)) {
    const fn = `DeviceGroup.${c.name}`;
    const names = c.deviceTensors ?? [];
    // out / outputs: 2 devices' blocks of the input's 3 rows, or 1 of 2 blocks of the input's 6 rows.
    const ts = names.map((_, i) => per(names.length === 1 ? 3 : c.layout === 'gather' ? (i === 0 ? 6 : 3) : (i === 0 ? 3 : 6)));
    const rooted = c.root !== undefined;
    methods(c.name).call(g, ...ts);
    const got = backend.calls.pop() as CollectiveCall<gx.Tensor[]>;
    t.is(got.c, c);
    t.is(got.fn, fn);
    t.deepEqual(got.tensors, ts, `${fn}: the tensors, in the table's order`);
    t.deepEqual([got.op, got.peer], [c.reduces ? 'sum' : undefined, 0], `${fn}: the defaults`);
    const explicit = [...ts, ...(rooted ? [1] : []), ...(c.reduces ? ['max'] : [])];
    methods(c.name).call(g, ...explicit);
    const got2 = backend.calls.pop() as CollectiveCall<gx.Tensor[]>;
    t.deepEqual([got2.op, got2.peer], [c.reduces ? 'max' : undefined, rooted ? 1 : 0], `${fn}: op and root as given`);
    names.forEach((name, i) => {
      const bad = ts.map((x, j) => (j === i ? x.slice(0, 1) : x));
      t.throws(() => methods(c.name).call(g, ...bad), { message: `${fn}: ${name} must be an array of 2 tensors, one per device (cpu, cpu)` });
    });
    if (rooted) t.throws(() => methods(c.name).call(g, ...ts, 2), { message: `${fn}: root must be a device's position from 0 to 1, got 2` });
    if (c.reduces) {
      t.throws(() => methods(c.name).call(g, ...ts, ...(rooted ? [0] : []), 'mean'), { message: `${fn}: op must be one of sum, prod, min, max, avg, got mean` });
      const ints = ts.map((x) => x.map((y) => y.astype('int32')));
      t.throws(() => methods(c.name).call(g, ...ints, ...(rooted ? [0] : []), 'avg'), { message: `${fn}: 'avg' needs a floating tensor, got int32` });
    }
    if (names.length === 2) t.throws(() => methods(c.name).call(g, ts[0], ts[0]), { message: new RegExp(`^${fn}: with 2 ranks and a block of float32 \\[\\d\\], the stacked tensor must be`) });
  }
  t.is(backend.calls.length, 0, 'no bad call reached the backend');
});

async function groups(worldSize: number): Promise<ProcessGroup[]> {
  const port = await freePort();
  return Promise.all(Array.from({ length: worldSize }, (_, rank) =>
    createProcessGroup({ rank, worldSize, masterAddr: '127.0.0.1', masterPort: port, timeoutMs: 10_000 }, 'test')));
}

test('ProcessGroup: a bad argument of any row is an error naming the function and the argument', async (t) => {
  const [g0, g1] = await groups(2);
  try {
    const methods = (name: string): ((...a: unknown[]) => Work) => Reflect.get(g0, name) as (...a: unknown[]) => Work;
    for (const c of ROWS) {
      const fn = `gx.distributed.${c.name}`;
      const ts = c.tensors.map((_, i) => gx.zeros([c.layout === 'gather' && i === 0 ? 4 : c.layout === 'scatter' && i === 1 ? 4 : 2]));
      c.tensors.forEach((name, i) => {
        t.throws(() => methods(c.name).call(g0, ...ts.map((x, j) => (j === i ? [1, 2] : x)), 1), { message: `${fn}: ${name} must be a Tensor` });
      });
      if (c.root !== undefined) {
        t.throws(() => methods(c.name).call(g0, ...ts, 2), { message: `${fn}: ${c.root} must be a rank from 0 to 1, got 2` });
        if (c.layout === 'p2p') t.throws(() => methods(c.name).call(g0, ...ts, 0), { message: `${fn}: ${c.root} is this rank (0)` });
      }
      if (c.reduces) t.throws(() => methods(c.name).call(g0, ...ts, ...(c.root ? [1] : []), 'mean'), { message: `${fn}: op must be one of sum, prod, min, max, avg, got mean` });
    }
  } finally {
    await Promise.all([g0.destroy(), g1.destroy()]);
  }
});

test('bool tensors through the store reduce as NCCL reduces them: sum and max are or, prod and min are and', async (t) => {
  const random = rng(3535);
  const gs = await groups(3);
  const n = 16;
  const bits = gs.map(() => Array.from({ length: n }, () => random() < 0.5));
  const or = Array.from({ length: n }, (_, i) => bits.some((b) => b[i]));
  const and = Array.from({ length: n }, (_, i) => bits.every((b) => b[i]));
  t.true(or.some((v, i) => v !== and[i]), 'the inputs tell or from and');
  for (const [op, want] of [['sum', or], ['prod', and], ['min', and], ['max', or]] as const) {
    const xs = bits.map((b) => gx.tensor(b.map(Number), { dtype: 'bool' }));
    await Promise.all(gs.map((g, r) => g.allReduce(xs[r], op)));
    for (const x of xs) t.deepEqual(Array.from(x.toArraySync() as Uint8Array, Boolean), want, `allReduce ${op}`);
  }
  const outs = gs.map(() => gx.full([4], 1, { dtype: 'bool' }));
  const ins = bits.map((b) => gx.tensor(b.slice(0, 12).map(Number), { dtype: 'bool' }));
  await Promise.all(gs.map((g, r) => g.reduceScatter(outs[r], ins[r], 'prod')));
  outs.forEach((o, r) => t.deepEqual(Array.from(o.toArraySync() as Uint8Array, Boolean), and.slice(4 * r, 4 * r + 4), `reduceScatter prod, rank ${r}`));
  t.throws(() => gs[0].allReduce(gx.zeros([2], { dtype: 'bool' }), 'avg'), { message: 'gx.distributed.allReduce: \'avg\' needs a floating tensor, got bool' });
  await Promise.all(gs.map((g) => g.destroy()));
});
