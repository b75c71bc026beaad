// The `params` argument of an optimizer, read and checked: an array (or any
// iterable) of tensors, or of param groups ({ params, ...options }) that
// override the optimizer's options for their tensors, as torch.optim takes.
// Every tensor must be a leaf that requires grad (what backward() gives a
// .grad and an optimizer may update in place), alive, and in one group once.
import { describeValue } from '../core/shape';
import { Tensor } from '../core/tensor';
import { checkOptions } from '../core/options';

/** A param group as passed: its tensors and the options it overrides. */
export type ParamGroupSpec<O extends object> = O & { params: Iterable<Tensor> | Tensor };

/** What an optimizer takes: tensors, or param groups. */
export type Params<O extends object> = Iterable<Tensor> | Iterable<ParamGroupSpec<O>>;

/** A group read: its tensors (checked) and its options (keys checked, values not yet). */
export interface ReadGroup {
  params: Tensor[];
  opts: Record<string, unknown>;
}

function isIterable(x: unknown): x is Iterable<unknown> {
  return x !== null && typeof x === 'object' && typeof (x as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function';
}

function describe(x: unknown): string {
  return x instanceof Tensor ? 'a Tensor' : describeValue(x);
}

/** Checks one tensor an optimizer is to update; `where` names it in the argument (params[2], params[0].params[1]). */
export function checkParam(fn: string, p: unknown, where: string): Tensor {
  if (!(p instanceof Tensor)) throw new TypeError(`${fn}: ${where} must be a Tensor, got ${describe(p)}`);
  if (p.isDisposed) throw new Error(`${fn}: ${where} is disposed`);
  if (!p.isLeaf) {
    throw new Error(`${fn}: ${where} is not a leaf tensor (${String(p.gradFn)} made it), and an optimizer can only update leaves; ` +
      'pass the tensors you called requiresGrad_() on (x.detach().requiresGrad_() makes a new leaf)');
  }
  if (!p.requiresGrad) {
    throw new Error(`${fn}: ${where} does not require grad, so backward() never gives it a .grad; call requiresGrad_() on it first`);
  }
  return p;
}

/**
 * Reads `params` into groups. `keys` are the options a group may override
 * (the optimizer's own). `seen` holds tensors already in the optimizer
 * (addParamGroup), and collects the new ones.
 */
export function readParams(fn: string, params: unknown, keys: readonly string[], seen = new Set<Tensor>(), path = 'params'): ReadGroup[] {
  if (params instanceof Tensor) {
    throw new TypeError(`${fn}: ${path} must be an array of tensors or of param groups ({ params, ...options }), got a Tensor; pass [tensor]`);
  }
  if (!isIterable(params) || typeof params === 'string') {
    throw new TypeError(`${fn}: ${path} must be an array of tensors or of param groups ({ params, ...options }), got ${describeValue(params)}`);
  }
  const items = Array.from(params);
  if (items.length === 0) throw new Error(`${fn}: ${path} is empty; an optimizer needs at least one tensor to update`);
  const grouped = !(items[0] instanceof Tensor);
  const groups: ReadGroup[] = grouped
    ? items.map((g, i) => readGroup(fn, g, `${path}[${i}]`, keys))
    : [{ params: items as Tensor[], opts: {} }];
  for (const [gi, g] of groups.entries()) {
    const at = (i: number): string => (grouped ? `${path}[${gi}].params[${i}]` : `${path}[${i}]`);
    g.params.forEach((p, i) => {
      checkParam(fn, p, at(i));
      if (seen.has(p)) throw new Error(`${fn}: ${at(i)} appears more than once (in this group or another); each tensor may be given once`);
      seen.add(p);
    });
  }
  return groups;
}

function readGroup(fn: string, g: unknown, where: string, keys: readonly string[]): ReadGroup {
  if (g instanceof Tensor || g === null || typeof g !== 'object' || Array.isArray(g) || !('params' in g)) {
    throw new TypeError(`${fn}: ${where} must be a param group ({ params: [tensors], ...options }) like the others, got ${describe(g)}`);
  }
  const { params, ...opts } = checkOptions<Record<string, unknown>>(g, `${fn} ${where}`, [...keys, 'params']);
  let list: unknown[];
  if (params instanceof Tensor) list = [params];
  else if (isIterable(params) && typeof params !== 'string') list = Array.from(params);
  else throw new TypeError(`${fn}: ${where}.params must be an array of tensors, got ${describeValue(params)}`);
  if (list.length === 0) throw new Error(`${fn}: ${where}.params is empty`);
  return { params: list as Tensor[], opts };
}
