// NOTE [ Derivatives beside a user's schema ]
// An extension op's derivative can be declared in C++ beside its schema, as
// torch's derivatives.yaml declares a native function's:
//   m.def("cube(Tensor x) -> Tensor").impl(gx::kCPU, cube).derivative("x: cube_backward(grad, x)");
// so the op records on autograd's tape as soon as its library loads, with no
// JS registration. The core keeps the text (set_derivative in the C ABI);
// this file reads it when the library loads (and `gpuext build` reads it
// after the build, so a bad formula is a build error):
//   formula := clause (';' clause)*
//   clause  := input (',' input)* ':' backward_op '(' [argument (',' argument)*] ')'
// Each clause's backward op (of the same library) returns one tensor per
// input named before the colon (a tuple when several). Inputs are the
// forward's positional Tensor arguments, each named at most once. Arguments
// are the forward's arguments (as called), its results (by their schema
// names, or result0, result1 ...; result is result0), the gradients of its
// results (grad0, grad1 ...; grad is grad0; zeros for a result no gradient
// reached) or numbers. Only the tensors the formula reads are saved.
// gx.autograd.registerAutograd, called later, replaces the declared one.
import type { NativeOpDescriptor } from '../core/native';
import { Tensor } from '../core/tensor';
import type { AutogradSpec, FunctionContext } from './function';

type Ref = { kind: 'arg'; index: number } | { kind: 'result'; index: number } | { kind: 'grad'; index: number } | { kind: 'number'; value: number };

/** One clause: the forward's argument indices whose gradients the backward op returns, the op and its arguments. */
export interface DerivativeClause { inputs: number[]; op: string; args: Ref[] }

const IDENT = /^[A-Za-z_]\w*$/;

/**
 * The clauses of `op`'s declared derivative, checked against its schema and
 * the library's other ops; throws an Error naming the op and the formula.
 */
export function parseDerivative(op: NativeOpDescriptor, library: readonly NativeOpDescriptor[]): DerivativeClause[] {
  const formula = op.derivative ?? '';
  const fail = (why: string): never => {
    throw new Error(`${op.qualifiedName}: derivative '${formula}': ${why}`);
  };
  const argIndex = new Map<string, number>(op.args.map((a, i): [string, number] => [a.name, i]));
  const resultIndex = new Map<string, number>(op.returns.map((r, i): [string, number] => [r.name, i]).filter(([n]) => n !== ''));
  const taken = new Set<number>();
  return formula.split(';').map((text) => {
    const m = /^\s*([^:]+):\s*([A-Za-z_]\w*)\s*\(([^()]*)\)\s*$/.exec(text);
    if (m === null) return fail(`'${text.trim()}' must read 'inputs: backward_op(arguments)', e.g. 'x: cube_backward(grad, x)'`);
    const inputs = m[1].split(',').map((n) => n.trim()).map((n) => {
      const i = argIndex.get(n);
      if (i === undefined) return fail(`'${n}' is not an argument of ${op.schema}`);
      const a = op.args[i];
      if (a.type !== 'Tensor' || a.kwOnly) return fail(`'${n}' is a ${a.kwOnly ? 'keyword-only ' : ''}${a.type}: only positional Tensor arguments take gradients`);
      if (taken.has(i)) return fail(`'${n}' gets its gradient twice`);
      taken.add(i);
      return i;
    });
    const backward = library.find((o) => o.name === m[2]);
    if (backward === undefined) return fail(`'${m[2]}' is not an op of this library (it has ${library.map((o) => o.name).join(', ')})`);
    const wanted = backward.returnsTuple ? backward.returns.length : backward.returns.length === 1 ? 1 : 0;
    if (wanted !== inputs.length || backward.returns.some((r) => r.type !== 'Tensor')) {
      fail(`${m[2]} must return ${inputs.length} Tensor${inputs.length === 1 ? '' : 's'} (one per input before the colon), but its schema is ${backward.schema}`);
    }
    const args = m[3].trim() === '' ? [] : m[3].split(',').map((s): Ref => {
      const n = s.trim();
      if (n !== '' && Number.isFinite(Number(n))) return { kind: 'number', value: Number(n) };
      if (!IDENT.test(n)) return fail(`argument '${n}' is not a name or a number`);
      const g = /^grad(\d*)$/.exec(n), r = /^result(\d*)$/.exec(n);
      const k = (d: string): number => (d === '' ? 0 : Number(d));
      const i = argIndex.get(n);
      if (i !== undefined) {
        // Generated bindings pass the positional arguments to autograd, not the options object.
        if (op.args[i].kwOnly) return fail(`'${n}' is keyword-only: a derivative reads positional arguments, results and gradients`);
        return { kind: 'arg', index: i };
      }
      const ri = resultIndex.get(n);
      if (ri !== undefined) return { kind: 'result', index: ri };
      if (g !== null && k(g[1]) < op.returns.length) return { kind: 'grad', index: k(g[1]) };
      if (r !== null && k(r[1]) < op.returns.length) return { kind: 'result', index: k(r[1]) };
      return fail(`'${n}' is neither an argument nor a result of ${op.schema}, nor grad/gradK/resultK of one of its ${op.returns.length} results`);
    });
    if (args.length !== backward.args.filter((a) => !a.kwOnly).length) {
      fail(`${m[2]} takes ${backward.args.filter((a) => !a.kwOnly).length} positional arguments (${backward.schema}), the formula gives ${args.length}`);
    }
    return { inputs, op: m[2], args };
  });
}

/** The forward's positional argument `index` as called, else its default. */
function argValue(op: NativeOpDescriptor, called: readonly unknown[], index: number): unknown {
  return called[index] ?? op.args[index].default;
}

/**
 * The autograd spec of a declared derivative: setupContext saves the tensors
 * the clauses read; backward calls each clause's op (`functions`, by schema
 * name) and returns one gradient per argument as called.
 */
export function derivativeSpec(op: NativeOpDescriptor, clauses: readonly DerivativeClause[],
  call: (name: string, args: unknown[]) => unknown): AutogradSpec {
  const refs = clauses.flatMap((c) => c.args).filter((r) => r.kind === 'arg' || r.kind === 'result');
  const key = (r: Ref): string => `${r.kind}:${'index' in r ? r.index : ''}`;
  const keys = [...new Set(refs.map(key))];
  return {
    setupContext(ctx: FunctionContext, inputs: readonly unknown[], output: unknown): void {
      const results = Array.isArray(output) ? output : [output];
      const tensors: Tensor[] = [];
      const slots: Record<string, unknown> = {};
      for (const k of keys) {
        const [kind, i] = k.split(':');
        const v = kind === 'arg' ? argValue(op, inputs, Number(i)) : results[Number(i)];
        if (v instanceof Tensor) {
          slots[k] = tensors.length;
          tensors.push(v);
        } else {
          slots[k] = { value: v };
        }
      }
      ctx.saveForBackward(...tensors);
      ctx.declared = { slots, count: inputs.length };
    },
    backward(ctx: FunctionContext, ...grads: Tensor[]): (Tensor | null)[] {
      const { slots, count } = ctx.declared as { slots: Record<string, unknown>; count: number };
      const saved = ctx.savedTensors;
      const read = (r: Ref): unknown => {
        if (r.kind === 'number') return r.value;
        if (r.kind === 'grad') return grads[r.index].contiguous();
        const s = slots[key(r)];
        return typeof s === 'number' ? saved[s] : (s as { value: unknown }).value;
      };
      const out: (Tensor | null)[] = new Array<Tensor | null>(count).fill(null);
      for (const c of clauses) {
        const needed = c.inputs.some((i) => ctx.needsInputGrad[i]);
        if (!needed) continue;
        const r = call(c.op, c.args.map(read));
        const list = Array.isArray(r) ? r : [r];
        c.inputs.forEach((i, k) => { out[i] = list[k] as Tensor; });
      }
      return out;
    },
  };
}
