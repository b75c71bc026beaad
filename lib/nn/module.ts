// gx.nn.Module: the base of the layers, as torch.nn.Module: parameters,
// buffers and submodules by name, train()/eval(), zeroGrad(), to(device or
// dtype), stateDict()/loadStateDict(), apply(), dispose().
//
// NOTE [ Module ownership ]
// A module owns its parameters and buffers: tensors kept out of every tidy
// scope (a layer made inside the caller's gx.tidy must outlive it), freed by
// dispose() (or `using`), which also disposes the submodules. Parameters are
// leaves that require grad; their .grad is theirs (zeroGrad() clears it).
// A layer reads its tensors through the module's tables (`get weight()`),
// never through fields of its own, so that to() and loadStateDict() have one
// place to change: to() replaces a tensor by its converted copy (a new
// tensor: an optimizer made before must be made again, as torch says of
// .cuda()), loadStateDict() copies the values in place (identity kept).
//
// NOTE [ Calling a module ]
// JS objects cannot be called, so `m.call(x)` stands for torch's `m(x)`: it
// runs `forward` (which a layer overrides) and is what containers use.
// `m.forward(x)` does the same; `m.fn` is `m.call` bound, for passing a
// module where a function is expected (`xs.map(layer.fn)`).
import { noGrad } from '../tape/mode';
import { type DeviceLike } from '../core/device';
import { isDType, type DType } from '../core/dtype';
import { FLOAT_DTYPES } from '../generated/dtypes';
import { booleanOption, checkOptions, optionKeys } from '../core/options';
import { describeValue, formatShape } from '../core/shape';
import { copyValues, Tensor } from '../core/tensor';
import { untrack } from '../core/tidy';

/** What stateDict() gives and loadStateDict() takes: tensors by dotted name ('0.weight', 'encoder.bias'). */
export type StateDict = Record<string, Tensor>;

/** The keys loadStateDict() did not match (with strict: false; strict refuses them). */
export interface LoadResult {
  missingKeys: string[];
  unexpectedKeys: string[];
}

export interface LoadStateDictOptions {
  /** Refuse a dict whose keys differ from the module's (default true). */
  strict?: boolean;
}

export interface RegisterBufferOptions {
  /** Whether stateDict() includes it (default true). */
  persistent?: boolean;
}

const LOAD_KEYS = optionKeys<LoadStateDictOptions>({ strict: true });
const RECURSE_KEYS = optionKeys<{ recurse?: boolean }>({ recurse: true });
const BUFFER_KEYS = optionKeys<RegisterBufferOptions>({ persistent: true });
const NAME = /^[A-Za-z_$][\w$]*$|^\d+$/;

const isFloating = (d: DType): boolean => (FLOAT_DTYPES as readonly DType[]).includes(d);

/** Takes ownership of a tensor (NOTE [ Module ownership ]). */
function own(t: Tensor): Tensor {
  untrack(t);
  return t;
}

/**
 * The base of every layer (torch.nn.Module). A subclass registers its
 * parameters, buffers and submodules in its constructor and overrides
 * `forward`; call it as `m.call(x)` (NOTE [ Calling a module ]).
 * @example
 * class Mlp extends gx.nn.Module {
 *   constructor() { super(); this.registerModule('fc1', new gx.nn.Linear(4, 8)); this.registerModule('fc2', new gx.nn.Linear(8, 1)); }
 *   forward(x: gx.Tensor) { return this.sub('fc2').call(gx.relu(this.sub('fc1').call(x))); }
 * }
 */
export class Module<In extends unknown[] = [Tensor], Out = Tensor> implements Disposable {
  /** True in training mode (Dropout drops), false after eval(). */
  training = true;
  readonly #params = new Map<string, Tensor | null>();
  readonly #buffers = new Map<string, Tensor | null>();
  readonly #nonPersistent = new Set<string>();
  readonly #modules = new Map<string, AnyModule | null>();
  #disposed = false;

  /** The module's name in messages (its class's). */
  get name(): string {
    return this.constructor.name;
  }

  /** The computation; layers override it. Call the module with call() (NOTE [ Calling a module ]). */
  forward(...args: In): Out {
    void args;
    throw new Error(`${this.name}.forward: not implemented; a module subclass overrides forward`);
  }

  /** Runs forward, as torch's `module(x)`. @example const y = linear.call(x); */
  call(...args: In): Out {
    this.#checkAlive(`${this.name}.call`);
    return this.forward(...args);
  }

  /** call() bound to this module, for passing it where a function is expected. */
  get fn(): (...args: In) => Out {
    return (...args: In) => this.call(...args);
  }

  #checkAlive(fn: string): void {
    if (this.#disposed) throw new Error(`${fn}: the module was disposed`);
  }

  #checkName(fn: string, name: unknown): string {
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw new TypeError(`${fn}: argument 'name' must be an identifier or an index (no dots), got ${describeValue(name)}`);
    }
    if (this.#params.has(name) || this.#buffers.has(name) || this.#modules.has(name)) {
      throw new Error(`${fn}: '${name}' is already registered on ${this.name}`);
    }
    return name;
  }

  /**
   * Registers a parameter (a floating tensor, made a leaf that requires grad, owned by the module) or null
   * (a slot, as Linear's bias with bias: false). Returns it.
   */
  registerParameter<T extends Tensor | null>(name: string, t: T): T {
    const fn = `${this.name}.registerParameter`;
    this.#checkName(fn, name);
    if (t !== null) {
      if (!(t instanceof Tensor)) throw new TypeError(`${fn}: argument 'param' must be a Tensor or null, got ${describeValue(t)}`);
      if (!t.isLeaf) throw new Error(`${fn}: parameter '${name}' was made by an op; pass a leaf (detach() it)`);
      if (!isFloating(t.dtype)) throw new TypeError(`${fn}: parameter '${name}' must be floating, got ${t.dtype}`);
      own(t).requiresGrad_(true);
    }
    this.#params.set(name, t);
    return t;
  }

  /** Registers a buffer (a tensor that is state but not a parameter: running statistics), owned by the module. */
  registerBuffer<T extends Tensor | null>(name: string, t: T, opts?: RegisterBufferOptions): T {
    const fn = `${this.name}.registerBuffer`;
    const o = checkOptions<RegisterBufferOptions>(opts, fn, BUFFER_KEYS);
    this.#checkName(fn, name);
    if (t !== null && !(t instanceof Tensor)) throw new TypeError(`${fn}: argument 'tensor' must be a Tensor or null, got ${describeValue(t)}`);
    if (t !== null) own(t);
    this.#buffers.set(name, t);
    if (!booleanOption(fn, 'persistent', o.persistent, true)) this.#nonPersistent.add(name);
    return t;
  }

  /** Registers a submodule under `name` (disposed with this one). Returns it. */
  registerModule<M extends AnyModule | null>(name: string, m: M): M {
    const fn = `${this.name}.registerModule`;
    this.#checkName(fn, name);
    if (m !== null && !(m instanceof Module)) throw new TypeError(`${fn}: argument 'module' must be a gx.nn.Module or null, got ${describeValue(m)}`);
    this.#modules.set(name, m);
    return m;
  }

  /** The parameter registered as `name` (null for an empty slot); throws if there is none. */
  param(name: string): Tensor | null {
    const fn = `${this.name}.param`;
    this.#checkAlive(fn);
    if (!this.#params.has(name)) throw new Error(`${fn}: ${this.name} has no parameter '${name}'`);
    return this.#params.get(name) ?? null;
  }

  /** The buffer registered as `name` (null for an empty slot); throws if there is none. */
  buffer(name: string): Tensor | null {
    const fn = `${this.name}.buffer`;
    this.#checkAlive(fn);
    if (!this.#buffers.has(name)) throw new Error(`${fn}: ${this.name} has no buffer '${name}'`);
    return this.#buffers.get(name) ?? null;
  }

  /** The submodule registered as `name`; throws if there is none. */
  sub<M extends AnyModule = AnyModule>(name: string): M {
    const m = this.#modules.get(name);
    if (m === undefined || m === null) throw new Error(`${this.name}.sub: ${this.name} has no submodule '${name}'`);
    return m as M;
  }

  /** The direct submodules with their names, in registration order, each once (under its first name, as torch's). */
  namedChildren(): [string, AnyModule][] {
    const seen = new Set<AnyModule>();
    return [...this.#modules].filter((e): e is [string, AnyModule] => e[1] !== null && !seen.has(e[1]) && seen.add(e[1]) !== undefined);
  }

  /** The direct submodules. */
  children(): AnyModule[] {
    return this.namedChildren().map(([, m]) => m);
  }

  /** This module and every submodule below it, each once, with dotted names ('' for this one). */
  namedModules(prefix = ''): [string, AnyModule][] {
    const out: [string, AnyModule][] = [];
    const seen = new Set<AnyModule>();
    const walk = (m: AnyModule, p: string): void => {
      if (seen.has(m)) return;
      seen.add(m);
      out.push([p, m]);
      for (const [n, c] of m.namedChildren()) walk(c, p === '' ? n : `${p}.${n}`);
    };
    walk(this as AnyModule, prefix);
    return out;
  }

  /** This module and every submodule below it. */
  modules(): AnyModule[] {
    return this.namedModules().map(([, m]) => m);
  }

  /** The parameters with dotted names ('0.weight'), each tensor once (shared ones under their first name). */
  namedParameters(opts: { recurse?: boolean } = {}): [string, Tensor][] {
    const fn = `${this.name}.namedParameters`;
    const o = checkOptions<{ recurse?: boolean }>(opts, fn, RECURSE_KEYS);
    return this.#named((m) => m.#params, booleanOption(fn, 'recurse', o.recurse, true));
  }

  /** The parameters, each once: what an optimizer takes. @example new gx.optim.SGD(model.parameters(), { lr: 0.1 }) */
  parameters(opts: { recurse?: boolean } = {}): Tensor[] {
    return this.namedParameters(opts).map(([, t]) => t);
  }

  /** The buffers with dotted names. */
  namedBuffers(opts: { recurse?: boolean } = {}): [string, Tensor][] {
    const fn = `${this.name}.namedBuffers`;
    const o = checkOptions<{ recurse?: boolean }>(opts, fn, RECURSE_KEYS);
    return this.#named((m) => m.#buffers, booleanOption(fn, 'recurse', o.recurse, true));
  }

  /** The buffers. */
  buffers(opts: { recurse?: boolean } = {}): Tensor[] {
    return this.namedBuffers(opts).map(([, t]) => t);
  }

  #named(table: (m: AnyModule) => Map<string, Tensor | null>, recurse: boolean): [string, Tensor][] {
    this.#checkAlive(`${this.name}.namedParameters`);
    const out: [string, Tensor][] = [];
    const seen = new Set<Tensor>();
    const mods: [string, AnyModule][] = recurse ? this.namedModules() : [['', this as AnyModule]];
    for (const [p, m] of mods) {
      for (const [n, t] of table(m)) {
        if (t === null || seen.has(t)) continue;
        seen.add(t);
        out.push([p === '' ? n : `${p}.${n}`, t]);
      }
    }
    return out;
  }

  /** Sets training mode on this module and every submodule (false: eval mode); returns this. */
  train(mode = true): this {
    booleanOption(`${this.name}.train`, 'mode', mode);
    for (const m of this.modules()) m.training = mode;
    return this;
  }

  /** train(false). */
  eval(): this {
    return this.train(false);
  }

  /** Clears every parameter's .grad (disposing it), as torch's zero_grad() with set_to_none. */
  zeroGrad(): void {
    for (const p of this.parameters()) if (p.grad !== null) p.grad = null;
  }

  /** Calls fn on every submodule (children first, depth first) and then on this one, as torch's apply; returns this. */
  apply(fn: (m: AnyModule) => void): this {
    if (typeof fn !== 'function') throw new TypeError(`${this.name}.apply: argument 'fn' must be a function, got ${describeValue(fn)}`);
    for (const c of this.children()) c.apply(fn);
    fn(this as AnyModule);
    return this;
  }

  /**
   * Moves every parameter and buffer to `device` and/or converts the floating ones to `dtype`, as torch's
   * Module.to; the tensors are replaced by converted copies (NOTE [ Module ownership ]). Returns this.
   * @example model.to('cuda'); model.to('float64'); model.to('cuda', 'float16')
   */
  to(target: DeviceLike | DType, dtype?: DType): this {
    const fn = `${this.name}.to`;
    this.#checkAlive(fn);
    let device: DeviceLike | undefined;
    let dt = dtype;
    if (typeof target === 'string' && isDType(target)) dt = target;
    else device = target;
    if (dt !== undefined && (!isDType(dt) || !isFloating(dt))) throw new TypeError(`${fn}: argument 'dtype' must be a floating dtype, got ${describeValue(dt)}`);
    const convert = (t: Tensor): Tensor => {
      const want = dt !== undefined && isFloating(t.dtype) ? dt : t.dtype;
      return noGrad(() => (device === undefined ? t.to(want, { copy: true }) : t.to(device, want, { copy: true })));
    };
    // A tensor shared by two modules (tied weights) is converted once and stays shared.
    const done = new Map<Tensor, Tensor>();
    for (const m of this.modules()) m.#convert(convert, done);
    for (const old of done.keys()) old.dispose();
    return this;
  }

  /** to('float32'). */
  float(): this {
    return this.to('float32');
  }

  /** to('float64'). */
  double(): this {
    return this.to('float64');
  }

  /** to('float16'). */
  half(): this {
    return this.to('float16');
  }

  /** to('cpu'). */
  cpu(): this {
    return this.to('cpu');
  }

  /** to('cuda:index') (default the first GPU). */
  cuda(index = 0): this {
    return this.to(`cuda:${index}`);
  }

  /** Sets requiresGrad on every parameter (false freezes the module, as torch's requires_grad_); returns this. */
  requiresGrad_(on = true): this {
    booleanOption(`${this.name}.requiresGrad_`, 'requiresGrad', on);
    for (const p of this.parameters()) p.requiresGrad_(on);
    return this;
  }

  #convert(convert: (t: Tensor) => Tensor, done: Map<Tensor, Tensor>): void {
    const once = (t: Tensor, make: () => Tensor): Tensor => {
      let c = done.get(t);
      if (c === undefined) done.set(t, (c = own(make())));
      return c;
    };
    for (const [n, p] of this.#params) {
      if (p === null) continue;
      this.#params.set(n, once(p, () => {
        const q = convert(p).requiresGrad_(p.requiresGrad);
        if (p.grad !== null) q.grad = convert(p.grad);
        return q;
      }));
    }
    for (const [n, b] of this.#buffers) if (b !== null) this.#buffers.set(n, once(b, () => convert(b)));
  }

  /**
   * The parameters and persistent buffers by dotted name: the module's own tensors, not copies (save them
   * with gx.save; clone() what must outlive the module). As torch's state_dict, a tensor or a module
   * registered under two names (tied weights) is listed under each (namedParameters lists it once), in
   * torch's order: a module's parameters, its buffers, then its submodules'.
   * @example await gx.save('model.safetensors', model.stateDict())
   */
  stateDict(): StateDict {
    const fn = `${this.name}.stateDict`;
    this.#checkAlive(fn);
    const out: StateDict = {};
    this.#stateInto(out, '', new Set(), fn);
    return out;
  }

  #stateInto(out: StateDict, prefix: string, above: Set<AnyModule>, fn: string): void {
    for (const [n, t] of this.#params) if (t !== null) out[prefix + n] = t;
    for (const [n, t] of this.#buffers) if (t !== null && !this.#nonPersistent.has(n)) out[prefix + n] = t;
    above.add(this as AnyModule);
    for (const [n, m] of this.#modules) {
      if (m === null) continue;
      if (above.has(m)) throw new Error(`${fn}: module '${prefix}${n}' contains itself; a state dict would be endless`);
      m.#stateInto(out, `${prefix}${n}.`, above, fn);
    }
    above.delete(this as AnyModule);
  }

  /**
   * Copies the values of `dict` (what stateDict() or gx.loadTensors gave) into the parameters and buffers,
   * in place, converting dtype and device; shapes must match. With strict (the default) a missing or an
   * unexpected key is an error; else they are returned. A tensor under two names (tied weights) takes
   * each key, the later last, as torch's. The dict stays the caller's.
   * @example const saved = await gx.loadTensors('model.safetensors'); model.loadStateDict(saved); // then dispose saved's tensors
   */
  loadStateDict(dict: StateDict, opts?: LoadStateDictOptions): LoadResult {
    const fn = `${this.name}.loadStateDict`;
    this.#checkAlive(fn);
    const o = checkOptions<LoadStateDictOptions>(opts, fn, LOAD_KEYS);
    if (dict === null || typeof dict !== 'object' || dict instanceof Tensor || Array.isArray(dict)) {
      throw new TypeError(`${fn}: argument 'stateDict' must be an object of tensors by name, got ${describeValue(dict)}`);
    }
    const mine = this.stateDict();
    const missingKeys = Object.keys(mine).filter((k) => !(k in dict));
    const unexpectedKeys = Object.keys(dict).filter((k) => !(k in mine));
    if (booleanOption(fn, 'strict', o.strict, true) && (missingKeys.length > 0 || unexpectedKeys.length > 0)) {
      throw new Error(`${fn}: the state dict does not match ${this.name}: missing keys [${missingKeys.join(', ')}], unexpected keys [${unexpectedKeys.join(', ')}]`);
    }
    for (const [k, dst] of Object.entries(mine)) {
      if (!(k in dict)) continue;
      const src = dict[k];
      if (!(src instanceof Tensor)) throw new TypeError(`${fn}: stateDict['${k}'] must be a Tensor, got ${describeValue(src)}`);
      if (formatShape(src.shape) !== formatShape(dst.shape)) {
        throw new Error(`${fn}: stateDict['${k}'] has shape ${formatShape(src.shape)} but the module's has ${formatShape(dst.shape)}`);
      }
    }
    noGrad(() => {
      for (const [k, dst] of Object.entries(mine)) {
        if (!(k in dict)) continue;
        const src = dict[k];
        if (src.dtype === dst.dtype) copyValues(dst, src, fn);
        else {
          using c = src.astype(dst.dtype);
          copyValues(dst, c, fn);
        }
      }
    });
    return { missingKeys, unexpectedKeys };
  }

  /** The layer's settings for toString ('inFeatures=3, outFeatures=2'); layers override it. */
  extraRepr(): string {
    return '';
  }

  /** The module tree, as torch prints it. */
  toString(): string {
    const kids = this.namedChildren();
    if (kids.length === 0) return `${this.name}(${this.extraRepr()})`;
    const inner = kids.map(([n, m]) => `  (${n}): ${String(m).split('\n').join('\n  ')}`).join('\n');
    return `${this.name}(${this.extraRepr()}\n${inner}\n)`;
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return this.#disposed;
  }

  /** Frees the parameters (and their .grad), the buffers and the submodules. A second call does nothing. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const t of [...this.#params.values(), ...this.#buffers.values()]) if (t !== null && !t.isDisposed) t.dispose();
    for (const m of this.#modules.values()) m?.dispose();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Any module, whatever its forward takes and gives. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyModule = Module<any[], unknown>;
