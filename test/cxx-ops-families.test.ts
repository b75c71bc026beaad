// Every elementwise and reduction face of <gpuext/ops.h> against its gx
// function: an extension made here from the op list (one C++ op per face and
// argument form), and each result's dtype, shape and values compared with the
// TypeScript call's over tensors of several dtypes and JS numbers, or both
// refusing (bool operands of sub, a dtype the op has no kernel for). The dtype
// rules of the C++ faces come from the list's `kind` as the TypeScript ones
// do; this checks they agree for every entry.
import test, { type ExecutionContext } from 'ava';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import * as ops from '../lib/generated/ops';
import { deviceTest, type TestDevice } from './helpers';

// The families' entries, from the generated tables (themselves made from ops/op-list.js).
const BINARY = Object.values(ops.BINARY);
const UNARY = Object.values(ops.UNARY);
const REDUCE = Object.values(ops.REDUCE);
const camel = (s: string): string => s.replace(/_+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());

/** One C++ op per face: b_<name>_tt / _ts / _st, u_<name>, r_<name>. */
function source(): string {
  const fns: string[] = [];
  const defs: string[] = [];
  const def = (schema: string, fn: string): void => { defs.push(`  m.def("${schema}").impl(gx::kCPU, ${fn}).impl(gx::kCUDA, ${fn});`); };
  const scalar = 'integral ? gx::Scalar(static_cast<int64_t>(s)) : gx::Scalar(s)';
  for (const { name } of BINARY) {
    fns.push(`gx::Tensor b_${name}_tt(const gx::Tensor& a, const gx::Tensor& b) { return gx::ops::${name}(a, b); }`,
      `gx::Tensor b_${name}_ts(const gx::Tensor& a, double s, bool integral) { return gx::ops::${name}(a, ${scalar}); }`,
      `gx::Tensor b_${name}_st(double s, bool integral, const gx::Tensor& a) { return gx::ops::${name}(${scalar}, a); }`);
    def(`b_${name}_tt(Tensor a, Tensor b) -> Tensor`, `b_${name}_tt`);
    def(`b_${name}_ts(Tensor a, float s, bool integral) -> Tensor`, `b_${name}_ts`);
    def(`b_${name}_st(float s, bool integral, Tensor a) -> Tensor`, `b_${name}_st`);
  }
  for (const { name } of UNARY) {
    fns.push(`gx::Tensor u_${name}(const gx::Tensor& x) { return gx::ops::${name}(x); }`);
    def(`u_${name}(Tensor x) -> Tensor`, `u_${name}`);
  }
  for (const { name, kind } of REDUCE) {
    fns.push(kind === 'arg'
      ? `gx::Tensor r_${name}(const gx::Tensor& x, std::vector<int64_t> dims, bool keep) { return dims.empty() ? gx::ops::${name}(x) : gx::ops::${name}(x, dims[0], keep); }`
      : `gx::Tensor r_${name}(const gx::Tensor& x, std::vector<int64_t> dims, bool keep) { return gx::ops::${name}(x, dims, keep); }`);
    def(`r_${name}(Tensor x, int[] dims, bool keep) -> Tensor`, `r_${name}`);
  }
  return ['#include <gpuext/ops.h>', '#include <vector>', '', ...fns, '', 'GX_LIBRARY(cxx_families, m) {', ...defs, '}', ''].join('\n');
}

type Fn = (...args: unknown[]) => gx.Tensor;
let cxx: Record<string, Fn>;

test.before(async () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'gx-cxx-families-'));
  cxx = await gx.loadInline({ name: 'cxx_families', cpp: source(), buildDirectory: cache }) as Record<string, Fn>;
});

/** Operands of several dtypes, never all zero: floats of both signs, small positive ints, bools. */
function operands(device: TestDevice): Record<string, gx.Tensor> {
  const g = new gx.Generator(21);
  const f = gx.randn([3, 4], { dtype: 'float64', device, generator: g });
  return {
    float64: f,
    float32: gx.randn([3, 4], { dtype: 'float32', device, generator: g }),
    row32: gx.randn([4], { dtype: 'float32', device, generator: g }),
    int32: gx.randint(1, 7, [3, 4], { dtype: 'int32', device, generator: g }),
    int64: gx.randint(1, 7, [4], { dtype: 'int64', device, generator: g }),
    uint8: gx.randint(1, 7, [3, 1], { dtype: 'uint8', device, generator: g }),
    bool: gx.gt(gx.randn([3, 4], { device, generator: g }), 0),
    scalar0d: gx.randn([], { dtype: 'float64', device, generator: g }),
  };
}

type Outcome = { ok: true; value: gx.Tensor } | { ok: false; message: string };
function outcome(f: () => gx.Tensor): Outcome {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

/** The C++ face agrees with the gx function: both refuse, or same dtype, shape and values (NaN equal to NaN). */
function agree(t: ExecutionContext, what: string, cxx: Outcome, ts: Outcome): void {
  if (!ts.ok || !cxx.ok) {
    t.is(cxx.ok, ts.ok, `${what}: C++ ${cxx.ok ? 'returned' : `threw (${cxx.ok ? '' : cxx.message})`}, TS ${ts.ok ? 'returned' : `threw (${ts.ok ? '' : ts.message})`}`);
    return;
  }
  t.is(cxx.value.dtype, ts.value.dtype, `${what}: dtype`);
  t.deepEqual(cxx.value.shape, ts.value.shape, `${what}: shape`);
  const a = Array.from(cxx.value.toArraySync() as ArrayLike<number | bigint | boolean>, Number);
  const b = Array.from(ts.value.toArraySync() as ArrayLike<number | bigint | boolean>, Number);
  const bad = a.findIndex((v, i) => !(Object.is(v, b[i]) || v === b[i] || (Number.isNaN(v) && Number.isNaN(b[i]))));
  t.is(bad, -1, `${what}: element ${bad}: ${a[bad]} vs ${b[bad]}`);
}

const gxFn = (name: string): ((...a: unknown[]) => gx.Tensor) => (gx as unknown as Record<string, (...a: unknown[]) => gx.Tensor>)[camel(name)];

deviceTest('every binary face of <gpuext/ops.h> decides dtypes and shapes as its gx function (tensors and numbers)', (t, device) => {
  gx.tidy(() => {
    const x = operands(device);
    const pairs: [string, string][] = [['float32', 'float32'], ['float32', 'row32'], ['int32', 'float64'], ['int32', 'int64'],
      ['uint8', 'int32'], ['bool', 'bool'], ['bool', 'int32'], ['int32', 'scalar0d']];
    const numbers = [2, 2.5, -3];
    for (const { name } of BINARY) {
      for (const [p, q] of pairs) {
        agree(t, `${name}(${p}, ${q})`, outcome(() => cxx[`b${camel(`_${name}`)}Tt`](x[p], x[q])), outcome(() => gxFn(name)(x[p], x[q])));
      }
      for (const p of ['float32', 'int32', 'bool']) {
        for (const n of numbers) {
          const integral = Number.isInteger(n);
          agree(t, `${name}(${p}, ${n})`, outcome(() => cxx[`b${camel(`_${name}`)}Ts`](x[p], n, integral)), outcome(() => gxFn(name)(x[p], n)));
          agree(t, `${name}(${n}, ${p})`, outcome(() => cxx[`b${camel(`_${name}`)}St`](n, integral, x[p])), outcome(() => gxFn(name)(n, x[p])));
        }
      }
    }
  });
});

deviceTest('every unary face of <gpuext/ops.h> decides dtypes as its gx function', (t, device) => {
  gx.tidy(() => {
    const x = operands(device);
    for (const { name } of UNARY) {
      for (const p of ['float64', 'float32', 'int32', 'uint8', 'bool']) {
        agree(t, `${name}(${p})`, outcome(() => cxx[`u${camel(`_${name}`)}`](x[p])), outcome(() => gxFn(name)(x[p])));
      }
    }
  });
});

deviceTest('every reduction face of <gpuext/ops.h> decides dtypes and shapes as its gx function', (t, device) => {
  gx.tidy(() => {
    const x = operands(device);
    for (const { name, kind } of REDUCE) {
      for (const p of ['float64', 'float32', 'int32', 'bool']) {
        const forms: [number[], boolean][] = kind === 'arg' ? [[[], false], [[1], false], [[0], true]]
          : [[[], false], [[1], false], [[0], true], [[-1, 0], false]];
        for (const [dims, keep] of forms) {
          const ts = (): gx.Tensor => (dims.length === 0 ? gxFn(name)(x[p]) : gxFn(name)(x[p], kind === 'arg' ? dims[0] : dims, { keepdims: keep }));
          agree(t, `${name}(${p}, [${dims.join(', ')}], keepdim=${keep})`, outcome(() => cxx[`r${camel(`_${name}`)}`](x[p], dims, keep)), outcome(ts));
        }
      }
    }
  });
});
