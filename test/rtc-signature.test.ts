// Kernel signatures of run-time kernels (lib/rtc/signature.ts): the
// parameters RawKernel reads from the source, the types a user declares, and
// the checks of scalar arguments against their C types. No compiler, no GPU.
import test from 'ava';

import { checkScalar, kindRange, parseKernelSignature, parseParamType, type KernelParam } from '../lib/rtc/signature';

// ---------------------------------------------------------------------------
// Kernel signatures

const sig = (src: string, name = 'f'): [string, string, string, boolean][] | undefined =>
  parseKernelSignature(src, name)?.map((p: KernelParam) => [p.name, p.type, p.kind, p.const]);

test('signature: extern "C", pointers, const, __restrict__, int', (t) => {
  t.deepEqual(sig('extern "C" __global__ void f(const float* __restrict__ x, float* __restrict__ y, int n) {}'), [
    ['x', 'const float* __restrict__', 'pointer', true],
    ['y', 'float* __restrict__', 'pointer', false],
    ['n', 'int', 'int32', false],
  ]);
});

test('signature: without extern "C", newlines and comments in the list', (t) => {
  t.deepEqual(sig('// f(int bogus)\n__global__\nvoid\nf( /* a */ double *a, // the input\n   unsigned int\n   count /* n */ )\n{ }'), [
    ['a', 'double*', 'pointer', false],
    ['count', 'unsigned int', 'uint32', false],
  ]);
});

test('signature: __launch_bounds__ before or after void', (t) => {
  t.deepEqual(sig('extern "C" __global__ void __launch_bounds__(256, 2) f(int* p) {}'), [['p', 'int*', 'pointer', false]]);
  t.deepEqual(sig('__global__ __launch_bounds__(MAX(128, 64)) void f(long n) {}'), [['n', 'long', 'int64', false]]);
});

test('signature: every integer and float spelling', (t) => {
  const types: [string, string][] = [
    ['float', 'float32'], ['double', 'float64'], ['int', 'int32'], ['unsigned int', 'uint32'], ['unsigned', 'uint32'],
    ['long long', 'int64'], ['unsigned long long', 'uint64'], ['long', 'int64'], ['unsigned long', 'uint64'],
    ['long long int', 'int64'], ['long unsigned int', 'uint64'], ['short', 'int16'], ['unsigned short', 'uint16'],
    ['char', 'int8'], ['signed char', 'int8'], ['unsigned char', 'uint8'], ['bool', 'bool'],
    ['int8_t', 'int8'], ['int16_t', 'int16'], ['int32_t', 'int32'], ['int64_t', 'int64'],
    ['uint8_t', 'uint8'], ['uint16_t', 'uint16'], ['uint32_t', 'uint32'], ['uint64_t', 'uint64'],
    ['size_t', 'uint64'], ['ptrdiff_t', 'int64'], ['std::size_t', 'uint64'], ['signed', 'int32'],
  ];
  const src = `extern "C" __global__ void f(${types.map(([ty], i) => `${ty} a${i}`).join(', ')}) {}`;
  t.deepEqual(parseKernelSignature(src, 'f')?.map((p) => p.kind), types.map(([, k]) => k));
  t.deepEqual(parseKernelSignature(src, 'f')?.map((p) => p.name), types.map((_, i) => `a${i}`));
});

test('signature: half by value is unknown, half* is a pointer; const by value; arrays are pointers', (t) => {
  t.deepEqual(sig('__global__ void f(__half h, half* p, const half* q, const int n, float x[], __nv_bfloat16 b) {}'), [
    ['h', '__half', 'unknown', false],
    ['p', 'half*', 'pointer', false],
    ['q', 'const half*', 'pointer', true],
    ['n', 'const int', 'int32', true],
    ['x', 'float*', 'pointer', false],
    ['b', '__nv_bfloat16', 'unknown', false],
  ]);
  t.deepEqual(sig('__global__ void f(float const* a, float* const b) {}'), [
    ['a', 'float const*', 'pointer', true],
    ['b', 'float* const', 'pointer', false],
  ]);
});

test('signature: templates are not handled; a missing kernel or a __device__ function is undefined', (t) => {
  t.is(sig('template<typename T>\n__global__ void f(T* x) {}'), undefined);
  t.is(sig('__global__ void g(int n) {}'), undefined);
  t.is(sig('__device__ void f(int n) {}'), undefined);
  t.is(sig('__global__ void f(int n) {}', 'not an identifier'), undefined);
});

test('signature: the exact name only (f, not f2 or myf); calls of f are not declarations', (t) => {
  const src = '__global__ void f2(double d) {}\n__global__ void myf(char c) {}\n__device__ void h(float* p) { f(p, 1); }\n__global__ void f(float* p, int n) { if (n) f2(1.0); }';
  t.deepEqual(sig(src), [['p', 'float*', 'pointer', false], ['n', 'int', 'int32', false]]);
  t.deepEqual(sig(src, 'f2'), [['d', 'double', 'float64', false]]);
});

test('signature: empty and void parameter lists; unnamed parameters; default arguments', (t) => {
  t.deepEqual(sig('__global__ void f() {}'), []);
  t.deepEqual(sig('__global__ void f(void) {}'), []);
  t.deepEqual(sig('__global__ void f(float*, unsigned long long) {}'), [['', 'float*', 'pointer', false], ['', 'unsigned long long', 'uint64', false]]);
  t.deepEqual(sig('__global__ void f(int n = 4, float s = 1.0f) {}'), [['n', 'int', 'int32', false], ['s', 'float', 'float32', false]]);
});

test('signature: a prototype then the definition: the definition names the parameters', (t) => {
  t.deepEqual(sig('extern "C" __global__ void f(float*, int);\n// ...\nextern "C" __global__ void f(float* out, int n) { }'), [
    ['out', 'float*', 'pointer', false], ['n', 'int', 'int32', false],
  ]);
  // Overloads with different parameters: ambiguous.
  t.is(sig('__global__ void f(float* x) {}\n__global__ void f(double* x) {}'), undefined);
});

test('signature: macros and preprocessor lines are skipped; inside extern "C" { } and namespaces', (t) => {
  t.deepEqual(sig('#define DECL __global__ void f(double z)\n#define N 4 \\\n  + 1\nextern "C" {\n__global__ void f(int* data, size_t len) {}\n}'), [
    ['data', 'int*', 'pointer', false], ['len', 'size_t', 'uint64', false],
  ]);
  t.deepEqual(sig('namespace k { __global__ void f(short s) {} }'), [['s', 'short', 'int16', false]]);
});

test('signature: struct and template-typed parameters are unknown; references are unknown', (t) => {
  t.deepEqual(sig('struct P { int a; };\n__global__ void f(P p, Foo<int, 3> q, const int& r) {}'), [
    ['p', 'P', 'unknown', false],
    ['q', 'Foo<int,3>', 'unknown', false],
    ['r', 'const int&', 'unknown', true],
  ]);
});

test('parseParamType: declarations given by the user', (t) => {
  t.deepEqual(parseParamType('const float* x', 'p0'), { name: 'x', type: 'const float*', kind: 'pointer', const: true });
  t.deepEqual(parseParamType('int', 'p1'), { name: 'p1', type: 'int', kind: 'int32', const: false });
  t.deepEqual(parseParamType('unsigned long long', 'p2'), { name: 'p2', type: 'unsigned long long', kind: 'uint64', const: false });
  t.deepEqual(parseParamType('float32', 'p3'), { name: 'p3', type: 'float32', kind: 'float32', const: false });
  t.deepEqual(parseParamType('T*', 'p4'), { name: 'p4', type: 'T*', kind: 'pointer', const: false });
});

// ---------------------------------------------------------------------------
// Scalar checks

test('kindRange gives the integer ranges as bigints', (t) => {
  t.deepEqual(kindRange('int8'), { min: -128n, max: 127n });
  t.deepEqual(kindRange('uint16'), { min: 0n, max: 65535n });
  t.deepEqual(kindRange('int32'), { min: -2147483648n, max: 2147483647n });
  t.deepEqual(kindRange('uint32'), { min: 0n, max: 4294967295n });
  t.deepEqual(kindRange('int64'), { min: -(2n ** 63n), max: 2n ** 63n - 1n });
  t.deepEqual(kindRange('uint64'), { min: 0n, max: 2n ** 64n - 1n });
  t.is(kindRange('float32'), undefined);
  t.is(kindRange('pointer'), undefined);
});

test('checkScalar converts values that fit and names the argument when one does not', (t) => {
  t.is(checkScalar('int32', 5, 'f', 'n'), 5);
  t.is(checkScalar('int32', -2147483648, 'f', 'n'), -2147483648);
  t.is(checkScalar('int32', 7n, 'f', 'n'), 7);
  t.is(checkScalar('int64', 3, 'f', 'n'), 3n);
  t.is(checkScalar('uint64', 2n ** 64n - 1n, 'f', 'n'), 2n ** 64n - 1n);
  t.is(checkScalar('float32', 1.5, 'f', 's'), 1.5);
  t.is(checkScalar('float64', 2n, 'f', 's'), 2);
  t.is(checkScalar('bool', true, 'f', 'b'), true);
  t.is(checkScalar('bool', 0, 'f', 'b'), false);
  t.throws(() => checkScalar('int32', 3000000000, 'f', 'n', { index: 2, type: 'int' }), {
    instanceOf: RangeError,
    message: "gx.RawKernel 'f': argument 2 'n' is declared int (int32) but 3000000000 is out of its range [-2147483648, 2147483647]",
  });
  t.throws(() => checkScalar({ name: 'x', type: 'float*', kind: 'pointer', const: false }, 1, 'f', 'x', { index: 1 }), {
    instanceOf: TypeError,
    message: "gx.RawKernel 'f': argument 1 'x' is declared float* but got a number; pass a Tensor",
  });
  t.throws(() => checkScalar('uint8', -1, 'f', 'c'), { instanceOf: RangeError, message: /declared uint8 but -1 is out of its range \[0, 255\]/ });
  t.throws(() => checkScalar('int64', 2n ** 63n, 'f', 'n'), { instanceOf: RangeError, message: /out of its range \[-9223372036854775808, 9223372036854775807\]/ });
  t.throws(() => checkScalar('int32', 2.5, 'f', 'n'), { instanceOf: TypeError, message: /but 2\.5 is not an integer/ });
  t.throws(() => checkScalar('int32', NaN, 'f', 'n'), { instanceOf: TypeError, message: /NaN is not an integer/ });
  t.throws(() => checkScalar('int32', '3', 'f', 'n'), { instanceOf: TypeError, message: /got a string; pass an integer number/ });
  t.throws(() => checkScalar('int32', true, 'f', 'n'), { instanceOf: TypeError, message: /got a boolean/ });
  t.throws(() => checkScalar('float32', 1e39, 'f', 's'), { instanceOf: RangeError, message: /declared float32 but 1e\+39 is out of its range/ });
  t.is(checkScalar('float32', Infinity, 'f', 's'), Infinity, 'infinities are float values');
  t.throws(() => checkScalar('float64', null, 'f', 's'), { instanceOf: TypeError, message: /got null; pass a number/ });
  t.throws(() => checkScalar('bool', 2, 'f', 'b'), { instanceOf: TypeError, message: /declared bool but got 2; pass true or false/ });
  t.throws(() => checkScalar({ name: 'h', type: '__half', kind: 'unknown', const: false }, 1, 'f', 'h'), { instanceOf: TypeError, message: /declared __half \(unknown\), a type gpuext cannot convert/ });
  // A label already formatted by the caller (the RawKernel layer) is kept as is.
  t.throws(() => checkScalar('int16', 40000, "gx.RawKernel 'k'", "3 'm'"), { message: "gx.RawKernel 'k': argument 3 'm' is declared int16 but 40000 is out of its range [-32768, 32767]" });
});

test('parseParamType reads builtin scalars and pointers to them by its table as the full parser reads them in a signature', (t) => {
  const words = ['float', 'double', 'bool', 'char', 'signed char', 'unsigned char', 'short', 'unsigned short int', 'int', 'signed', 'unsigned',
    'long', 'unsigned long', 'long long', 'signed long long int', 'unsigned long long', 'int8_t', 'uint16_t', 'int64_t', 'size_t', 'ptrdiff_t'];
  for (const w of words) {
    for (const type of [w, `${w}*`, `const ${w}`, `const ${w}*`, `${w}* __restrict__`, `const ${w}* __restrict__`]) {
      const fromTable = parseParamType(type, 'p3');
      const parsed = parseKernelSignature(`extern "C" __global__ void k(${type} p3) {}`, 'k')?.[0];
      t.deepEqual(fromTable, parsed, type);
      t.not(fromTable.kind, 'unknown', type);
      // With a name of its own (the elementwise kernels' `const float* __restrict__ a0_ptr`), kept.
      for (const name of ['a0_ptr', '$n', 'x1']) {
        t.deepEqual(parseParamType(`${type} ${name}`, 'p3'), parseKernelSignature(`extern "C" __global__ void k(${type} ${name}) {}`, 'k')?.[0], `${type} ${name}`);
      }
    }
  }
  // Near misses go through the parser and still read as it reads them.
  for (const decl of ['float *x', 'float* const', 'float*__restrict__', 'const const int', 'int int', 'unsigned  int', 'long long restrict',
    'float** p', 'float* __restrict__ __restrict__', 'float const* q']) {
    const parsed = parseKernelSignature(`extern "C" __global__ void k(${decl}) {}`, 'k')?.[0];
    t.deepEqual(parseParamType(decl, 'p3'), parsed && { ...parsed, name: parsed.name || 'p3' }, decl);
  }
  // What the table does not hold still goes through the parser.
  t.deepEqual(parseParamType('const float*', 'p0'), { name: 'p0', type: 'const float*', kind: 'pointer', const: true });
  t.is(parseParamType('float* __restrict__', 'p0').kind, 'pointer');
  t.is(parseParamType('constructor', 'p0').kind, 'unknown', 'an Object.prototype name is no scalar');
});
