// The one list of the built-in ops: each op's schema (its name is the name
// users call), its documentation and, for the elementwise and reduction
// families, the functor and compute types the kernels use and the rule the JS
// side decides dtypes by. scripts/gen/ops.js reads it and writes
//   ops/generated/op_lists.h      the families as X-macros, one per kernel file (group)
//   ops/generated/entry_points.h  every implementation's C++ declaration, typed from its schema
//   ops/generated/registry.cpp    the GX_LIBRARY block: each schema with its CPU and CUDA implementation
//   lib/generated/ops.ts          one typed call per schema (named arguments) and the family tables lib/ops reads
// so adding an elementwise op touches its functor (binary/functors.h or
// unary/functors.h), one line here, and its test case. `npm run gen` after
// editing; `npm test` fails while the generated files are stale.
//
// Families (scripts/gen/ops.js FAMILIES has their schemas):
//   binary: name(Tensor self, Tensor other, ScalarType dtype, Tensor out) -> ()
//           and name_scalar(Tensor self, float other, int other_int, bool reverse, ScalarType dtype, Tensor out) -> ()
//           kind: arith (the common dtype), div (floating), compare / logical (bool results);
//           noBool: bool operands are refused, this ends the message.
//   unary:  name(Tensor self, ScalarType dtype, Tensor out) -> ()
//           kind: float (integer and bool inputs give float32), keep (the input's dtype, bool refused).
//   reduce: name(Tensor self, int[] axis, ScalarType dtype, Tensor out) -> ()
//           kind: sum (integers give int64), mean (floating), extremum (the input's dtype), arg (int64 indices).
// Compute types (NOTE [ Compute types ] in common/hd.h): kCNumeric, kCFloating, kCBool, | kCNoBool.
// Other ops give their whole schema; `devices` defaults to both (name_cpu, name_cuda).
'use strict';

const binary = (name, functor, computes, group, kind, doc, noBool) =>
  ({ family: 'binary', name, functor, computes, group, kind, doc, noBool });
const unary = (name, functor, computes, group, kind, doc) => ({ family: 'unary', name, functor, computes, group, kind, doc });
const reduce = (name, functor, computes, group, kind, doc) => ({ family: 'reduce', name, functor, computes, group, kind, doc });
const op = (schema, doc, devices = ['cpu', 'cuda']) => ({ family: 'op', schema, doc, devices });

module.exports = [
  binary('add', 'AddOp', 'kCNumeric', 'arith', 'arith', 'Elementwise self + other, broadcasting.'),
  binary('sub', 'SubOp', 'kCNumeric | kCNoBool', 'arith', 'arith', 'Elementwise self - other, broadcasting.',
    '; for bool tensors use logicalXor'),
  binary('mul', 'MulOp', 'kCNumeric', 'arith', 'arith', 'Elementwise self * other, broadcasting.'),
  binary('div', 'DivOp', 'kCFloating', 'arith', 'div', 'Elementwise true division self / other, broadcasting.'),
  binary('pow', 'PowOp', 'kCNumeric | kCNoBool', 'misc', 'arith', 'Elementwise self ** other, broadcasting.',
    '; convert with .astype() first'),
  binary('maximum', 'MaximumOp', 'kCNumeric', 'misc', 'arith', 'Elementwise maximum (NaN propagates), broadcasting.'),
  binary('minimum', 'MinimumOp', 'kCNumeric', 'misc', 'arith', 'Elementwise minimum (NaN propagates), broadcasting.'),
  binary('remainder', 'RemainderOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'Python-style self % other (the divisor\'s sign).', '; convert with .astype() first'),
  binary('eq', 'EqOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self == other -> bool.'),
  binary('ne', 'NeOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self != other -> bool.'),
  binary('lt', 'LtOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self < other -> bool.'),
  binary('le', 'LeOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self <= other -> bool.'),
  binary('gt', 'GtOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self > other -> bool.'),
  binary('ge', 'GeOp', 'kCNumeric', 'compare', 'compare', 'Elementwise self >= other -> bool.'),
  binary('logical_and', 'LogicalAndOp', 'kCBool', 'logical', 'logical', 'Elementwise logical and of nonzero -> bool.'),
  binary('logical_or', 'LogicalOrOp', 'kCBool', 'logical', 'logical', 'Elementwise logical or of nonzero -> bool.'),
  binary('logical_xor', 'LogicalXorOp', 'kCBool', 'logical', 'logical', 'Elementwise logical xor of nonzero -> bool.'),

  unary('exp', 'ExpOp', 'kCFloating', 'float', 'float', 'Elementwise e ** x.'),
  unary('log', 'LogOp', 'kCFloating', 'float', 'float', 'Elementwise natural logarithm.'),
  unary('log1p', 'Log1pOp', 'kCFloating', 'float', 'float', 'Elementwise log(1 + x), accurate near 0.'),
  unary('sqrt', 'SqrtOp', 'kCFloating', 'float', 'float', 'Elementwise square root.'),
  unary('rsqrt', 'RsqrtOp', 'kCFloating', 'float', 'float', 'Elementwise 1 / sqrt(x).'),
  unary('sin', 'SinOp', 'kCFloating', 'float', 'float', 'Elementwise sine.'),
  unary('cos', 'CosOp', 'kCFloating', 'float', 'float', 'Elementwise cosine.'),
  unary('tanh', 'TanhOp', 'kCFloating', 'activation', 'float', 'Elementwise hyperbolic tangent.'),
  unary('sigmoid', 'SigmoidOp', 'kCFloating', 'activation', 'float', 'Elementwise 1 / (1 + exp(-x)).'),
  unary('gelu', 'GeluOp', 'kCFloating', 'activation', 'float', 'Elementwise GELU, the exact erf form.'),
  unary('softplus', 'SoftplusOp', 'kCFloating', 'activation', 'float',
    'Elementwise log(1 + exp(x)); x above 20 passes through.'),
  unary('neg', 'NegOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise -x.'),
  unary('abs', 'AbsOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise |x|.'),
  unary('sign', 'SignOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise sign: -1, 0 or 1 (0 for NaN).'),
  unary('floor', 'FloorOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise floor (integers unchanged).'),
  unary('ceil', 'CeilOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise ceiling (integers unchanged).'),
  unary('round', 'RoundOp', 'kCNumeric | kCNoBool', 'keep', 'keep',
    'Elementwise rounding, half to even (integers unchanged).'),
  unary('relu', 'ReluOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Elementwise max(x, 0) (NaN propagates).'),

  op('where(Tensor condition, Tensor? self, Tensor? other, float self_scalar, int self_int, float other_scalar, ' +
    'int other_int, ScalarType dtype, Tensor out) -> ()',
  'Elementwise condition ? self : other, broadcasting; an absent self/other is the scalar beside it.'),
  op('clamp(Tensor self, float? min, float? max, int min_int, int max_int, ScalarType dtype, Tensor out) -> ()',
    'Elementwise min(max(self, min), max) with number bounds (each optional); NaN propagates.'),
  op('astype(Tensor self, Tensor out) -> ()', 'Copies self into out (same shape), converting to out\'s dtype.'),

  reduce('sum', 'SumReducer', 'kCNumeric', 'sum', 'sum', 'Sum over axis (all for []).'),
  reduce('prod', 'ProdReducer', 'kCNumeric', 'sum', 'sum', 'Product over axis.'),
  reduce('mean', 'MeanReducer', 'kCFloating', 'sum', 'mean', 'Mean over axis.'),
  reduce('max', 'MaxReducer', 'kCNumeric', 'extremum', 'extremum', 'Maximum over axis (NaN propagates).'),
  reduce('min', 'MinReducer', 'kCNumeric', 'extremum', 'extremum', 'Minimum over axis (NaN propagates).'),
  reduce('argmax', 'ArgMaxReducer', 'kCNumeric | kCNoBool', 'arg', 'arg',
    'Index of the first maximum over axis (C order); NaN counts as the maximum.'),
  reduce('argmin', 'ArgMinReducer', 'kCNumeric | kCNoBool', 'arg', 'arg',
    'Index of the first minimum over axis (C order); NaN counts as the minimum.'),

  op('softmax(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()',
    'out = exp(x - max) / sum(exp(x - max)) along axis (out has self\'s shape), computing in dtype (floating).'),
  op('log_softmax(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()',
    'out = x - max - log(sum(exp(x - max))) along axis (out has self\'s shape), computing in dtype (floating).'),
  op('logsumexp(Tensor self, int[] axis, ScalarType dtype, Tensor out) -> ()',
    'log(sum(exp(x))) over axis, stable (max + log(sum(exp(x - max)))); -inf for lines of -inf or none.'),
  op('var(Tensor self, int[] axis, float correction, ScalarType dtype, Tensor out) -> ()',
    'Variance over axis: sum((x - mean)^2) / max(0, N - correction), one pass (shifted Welford).'),
  op('std(Tensor self, int[] axis, float correction, ScalarType dtype, Tensor out) -> ()',
    'Standard deviation over axis: the square root of var\'s result.'),
  op('cumsum(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()',
    'Inclusive prefix sums along axis (out has self\'s shape), computing in dtype\'s compute type.'),

  op('rand(Tensor out, int seed, int offset, float low, float high) -> ()',
    'Fills out (contiguous, floating) with Philox4x32-10 draws uniform in [low, high); element j uses counter ' +
    'offset + j / 4 (float64: j / 2).'),
  op('randn(Tensor out, int seed, int offset, float mean, float std) -> ()',
    'Fills out (contiguous, floating) with normal draws (Box-Muller on Philox4x32-10 pairs), counters as rand.'),
  op('randint(Tensor out, int seed, int offset, int low, int high) -> ()',
    'Fills out (contiguous, numeric) with integers uniform in [low, high), counters as rand (64-bit draws: j / 2).'),

  op('matmul(Tensor self, Tensor other, bool allow_tf32, Tensor out) -> ()',
    'out[b] = self[b or 0] @ other[b or 0] for [batch, m, k] and [batch, k, n], contiguous on CUDA (cuBLAS; ' +
    'allow_tf32 lets float32 use TF32 tensor cores), any strides on the CPU (a system BLAS, else a built-in kernel).'),
  op('svd(Tensor a, bool full, Tensor s, Tensor u, Tensor v) -> ()',
    'SVD of the column-major m x n matrix a ([n, m], m >= n; overwritten): s [n], u [m or n, m], v [n, n], ' +
    'column-major (cuSOLVER gesvdj on CUDA; LAPACK gesdd on the CPU when loaded, else one-sided Jacobi).'),
  op('backends() -> str',
    'What the CPU matmul and SVD use: lines gemm=<BLAS library or built-in kernel>, lapack=..., kernel=<the ' +
    'built-in kernel\'s instruction set>.', ['cpu']),
  op('set_cpu_blas_enabled(bool on) -> bool',
    'Lets the CPU matmul and SVD use the loaded BLAS / LAPACK (true, the default) or not; returns the previous ' +
    'setting (for tests of the built-in kernels).', ['cpu']),
  op('set_gemm_kernel(str name) -> str',
    'Makes the built-in CPU GEMM use the named micro-kernel (avx512f, avx2+fma, generic; \'\' keeps it) and ' +
    'returns the one in use (for tests of each kernel).', ['cpu']),
];
