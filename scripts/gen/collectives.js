// gx.distributed's collectives and reduce ops, generated from their one list, ops/dist/collective-list.js:
// the table and the typed faces in TypeScript (ProcessGroup's and DeviceGroup's methods, the default group's
// functions), and the kinds NCCL runs for ops/dist/nccl.cu's dispatch, so the names, arguments and codes
// never drift between the faces, the backends and C++. Run through scripts/gen.js.
'use strict';
const { generatedHeader } = require('./rows');
const { REDUCE_OPS, COLLECTIVES } = require('../../ops/dist/collective-list');

const LIST = 'ops/dist/collective-list.js';
const LAYOUTS = ['inplace', 'gather', 'scatter', 'p2p', 'none'];

/** Each layout's tensor arguments: the process group's, and the device group's (one tensor per device). */
const TENSORS = {
  inplace: [['tensor'], ['tensors']],
  gather: [['out', 'input'], ['outputs', 'inputs']],
  scatter: [['out', 'input'], ['outputs', 'inputs']],
  p2p: [['tensor'], undefined],
  none: [[], undefined],
};

const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const pascal = (name) => name[0].toUpperCase() + name.slice(1);
const quote = (s) => `'${s}'`;

/** The rows, checked: a mistake in the list is an error here, not a wrong face. */
function rows() {
  const ops = new Set(REDUCE_OPS.map((o) => o.name));
  for (const o of REDUCE_OPS) {
    if (!Number.isInteger(o.nccl)) throw new Error(`${LIST}: reduce op ${o.name} has no ncclRedOp_t`);
    if (o.boolAs !== undefined && !ops.has(o.boolAs)) throw new Error(`${LIST}: reduce op ${o.name}: boolAs ${o.boolAs} is not a reduce op`);
  }
  return COLLECTIVES.map((c) => {
    if (!LAYOUTS.includes(c.layout)) throw new Error(`${LIST}: ${c.name}: layout must be one of ${LAYOUTS.join(', ')}`);
    if (c.root !== undefined && c.root !== 'src' && c.root !== 'dst') throw new Error(`${LIST}: ${c.name}: root must be 'src' or 'dst'`);
    if (c.layout === 'p2p' && c.root === undefined) throw new Error(`${LIST}: ${c.name}: a p2p collective names its peer (root)`);
    if (c.deviceDoc !== undefined && TENSORS[c.layout][1] === undefined) throw new Error(`${LIST}: ${c.name}: a device group has no ${c.layout} collectives`);
    if (c.nccl && c.layout === 'none') throw new Error(`${LIST}: ${c.name}: NCCL collectives move tensors`);
    const [tensors, deviceTensors] = TENSORS[c.layout];
    return { ...c, reduces: c.reduces === true, ncclKind: c.nccl ? snake(c.name) : undefined, tensors,
      deviceTensors: c.deviceDoc !== undefined ? deviceTensors : undefined };
  });
}

/** A method's or function's parameters and the call's arguments: (tensors, root, op). */
function signature(c, onDevices) {
  const tensors = onDevices ? c.deviceTensors : c.tensors;
  const params = tensors.map((t) => `${t}: Tensor${onDevices ? '[]' : ''}`);
  const args = [...tensors];
  if (c.root !== undefined) {
    const root = onDevices ? 'root' : c.root;
    params.push(onDevices ? 'root = 0' : `${root}: number`);
    args.push(root);
  }
  if (c.reduces) {
    params.push('op: ReduceOp = \'sum\'');
    args.push('op');
  }
  return { params: params.join(', '), args };
}

function renderTable(cs) {
  const lines = [];
  lines.push('/** How a collective combines the ranks\' values. */');
  lines.push(`export type ReduceOp = ${REDUCE_OPS.map((o) => quote(o.name)).join(' | ')};`);
  lines.push('/** Every reduce op, in the order errors list them. */');
  lines.push(`export const REDUCE_OPS: readonly ReduceOp[] = [${REDUCE_OPS.map((o) => quote(o.name)).join(', ')}];`);
  lines.push('');
  lines.push('export interface ReduceOpInfo {');
  lines.push('  /** Its ncclRedOp_t. */');
  lines.push('  readonly nccl: number;');
  lines.push('  /** The op a bool tensor runs instead (NCCL has no bool type: bools travel as uint8, a sum is a logical or). */');
  lines.push('  readonly boolAs: ReduceOp;');
  lines.push('  /** Only floating tensors may use it. */');
  lines.push('  readonly floating: boolean;');
  lines.push('}');
  lines.push('');
  lines.push('export const REDUCE_OP_INFO: { readonly [K in ReduceOp]: ReduceOpInfo } = {');
  for (const o of REDUCE_OPS) lines.push(`  ${o.name}: { nccl: ${o.nccl}, boolAs: '${o.boolAs ?? o.name}', floating: ${o.floating === true} },`);
  lines.push('};');
  lines.push('');
  lines.push(`export type CollectiveName = ${cs.map((c) => quote(c.name)).join(' | ')};`);
  lines.push('');
  lines.push('/** One collective\'s row of the table (ops/dist/collective-list.js says what each field means). */');
  lines.push('export interface Collective {');
  lines.push('  readonly name: CollectiveName;');
  lines.push(`  readonly layout: ${LAYOUTS.map(quote).join(' | ')};`);
  lines.push('  /** The argument naming the root rank, or the peer of a p2p collective. */');
  lines.push('  readonly root: \'src\' | \'dst\' | undefined;');
  lines.push('  /** Whether it takes a reduce op. */');
  lines.push('  readonly reduces: boolean;');
  lines.push('  /** The kind nccl_collective takes (ops/generated/collectives.h), when NCCL runs it. */');
  lines.push('  readonly ncclKind: string | undefined;');
  lines.push('  /** The process group\'s tensor arguments, in order. */');
  lines.push('  readonly tensors: readonly string[];');
  lines.push('  /** The device group\'s (one tensor per device), when it has the collective. */');
  lines.push('  readonly deviceTensors: readonly string[] | undefined;');
  lines.push('}');
  lines.push('');
  lines.push('export const COLLECTIVES: { readonly [K in CollectiveName]: Collective } = {');
  for (const c of cs) {
    const list = (l) => (l === undefined ? 'undefined' : `[${l.map(quote).join(', ')}]`);
    lines.push(`  ${c.name}: { name: '${c.name}', layout: '${c.layout}', root: ${c.root ? quote(c.root) : 'undefined'}, reduces: ${c.reduces}, ` +
      `ncclKind: ${c.ncclKind ? quote(c.ncclKind) : 'undefined'}, tensors: ${list(c.tensors)}, deviceTensors: ${list(c.deviceTensors)} },`);
  }
  lines.push('};');
  return lines;
}

/** An abstract class of one face's methods, each handing its call to the subclass's collective(). */
function renderFace(cs, cls, doc, fnOf, onDevices) {
  const lines = ['', `/** ${doc} */`, `export abstract class ${cls} {`];
  lines.push('  /** @internal Checks one call of `c` against the table and starts it on a backend; `fn` names the call in errors. */');
  lines.push('  protected abstract collective(c: Collective, fn: string, tensors: readonly unknown[], root: unknown, op: unknown): Work;');
  for (const c of cs) {
    if (onDevices && c.deviceTensors === undefined) continue;
    const { params, args } = signature(c, onDevices);
    const tensors = args.slice(0, (onDevices ? c.deviceTensors : c.tensors).length);
    const root = c.root !== undefined ? args[tensors.length] : 'undefined';
    lines.push('');
    lines.push(`  /** ${onDevices ? c.deviceDoc : c.doc} */`);
    lines.push(`  ${c.name}(${params}): Work {`);
    lines.push(`    return this.collective(COLLECTIVES.${c.name}, '${fnOf(c.name)}', [${tensors.join(', ')}], ${root}, ${c.reduces ? 'op' : 'undefined'});`);
    lines.push('  }');
  }
  lines.push('}');
  return lines;
}

function renderTs(cs) {
  const lines = generatedHeader(LIST);
  lines.push('// gx.distributed\'s reduce ops and collectives: the table the faces check calls by and the backends run');
  lines.push('// (lib/distributed/README.md), and the faces\' typed methods, each handing its call to collective().');
  lines.push('import type { Tensor } from \'../core/tensor\';');
  lines.push('import type { Work } from \'../distributed/work\';');
  lines.push('');
  lines.push(...renderTable(cs));
  lines.push(...renderFace(cs, 'ProcessGroupCollectives', 'The process group\'s collectives (ProcessGroup, lib/distributed/group.ts).',
    (n) => `gx.distributed.${n}`, false));
  lines.push(...renderFace(cs, 'DeviceGroupCollectives', 'The device group\'s collectives: one tensor per device (DeviceGroup, lib/distributed/device-group.ts).',
    (n) => `DeviceGroup.${n}`, true));
  lines.push('');
  return lines.join('\n');
}

function renderFunctions(cs) {
  const lines = generatedHeader(LIST);
  lines.push('// The collectives on the default group (gx.distributed.initProcessGroup\'s), as torch.distributed\'s functions.');
  lines.push('import type { Tensor } from \'../core/tensor\';');
  lines.push('import type { Work } from \'../distributed/work\';');
  lines.push('import { group } from \'../distributed/default-group\';');
  lines.push('import type { ReduceOp } from \'./collectives\';');
  for (const c of cs) {
    const { params, args } = signature(c, false);
    lines.push('');
    lines.push(`/** ${c.doc} On the default group. */`);
    lines.push(`export function ${c.name}(${params}): Work {`);
    lines.push(`  return group('gx.distributed.${c.name}').${c.name}(${args.join(', ')});`);
    lines.push('}');
  }
  lines.push('');
  return lines.join('\n');
}

function renderHeader(cs) {
  const nccl = cs.filter((c) => c.ncclKind !== undefined);
  const head = '#define GX_FORALL_NCCL_COLLECTIVES(_)';
  const width = Math.max(head.length, ...nccl.map((c) => `  _(${pascal(c.name)}, ${c.ncclKind})`.length)) + 1;
  return [...generatedHeader(LIST),
    '// The collectives NCCL runs, as _(Enum, name): name is the kind lib/distributed hands nccl_collective.',
    '// ops/dist/nccl.cu defines enqueue_<name> for each and switches on Kind, so a row without its C++ body',
    '// does not compile.',
    '#pragma once',
    '#include <cstring>',
    '',
    `${head.padEnd(width)}\\`,
    ...nccl.map((c, i) => {
      const row = `  _(${pascal(c.name)}, ${c.ncclKind})`;
      return i === nccl.length - 1 ? row : `${row.padEnd(width)}\\`;
    }),
    '',
    'namespace gx::ops::collectives {',
    '',
    'enum class Kind : int {',
    ...nccl.map((c) => `  k${pascal(c.name)},`),
    '};',
    '',
    '// The kind named `name`, into *out; false when no collective is named so.',
    'inline bool parse_kind(const char* name, Kind* out) {',
    ...nccl.flatMap((c) => [`  if (std::strcmp(name, "${c.ncclKind}") == 0) {`, `    *out = Kind::k${pascal(c.name)};`, '    return true;', '  }']),
    '  return false;',
    '}',
    '',
    '}  // namespace gx::ops::collectives',
    ''].join('\n');
}

module.exports = {
  outputs: () => {
    const cs = rows();
    return [
      { path: 'lib/generated/collectives.ts', text: renderTs(cs) },
      { path: 'lib/generated/collective-functions.ts', text: renderFunctions(cs) },
      { path: 'ops/generated/collectives.h', text: renderHeader(cs) },
    ];
  },
};
