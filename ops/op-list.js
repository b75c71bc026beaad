// The one list of the built-in ops: each op's schema (its name is the name
// users call), its documentation and, for the elementwise and reduction
// families, the functor and compute types the kernels use and the rule the JS
// side decides dtypes by. scripts/gen/ops.js reads it and writes
//   ops/generated/op_lists.h      the families as X-macros, one per kernel file (group)
//   ops/generated/entry_points.h  every implementation's C++ declaration, typed from its schema
//   ops/generated/registry.cpp    the GX_LIBRARY block: each schema with its CPU and CUDA implementation
//   lib/generated/ops.ts          one typed call per schema (named arguments) and the family tables lib/ops reads
//   csrc/include/gpuext/ops_raw.h, ops.h   the C++ face for extensions (scripts/gen/cxx-ops.js): a call per schema,
//                                 and per family entry a function deciding its result by `kind`
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

// Elementwise entries: (name, functor, compute types, group, kind, doc, more), more being
// { example, inplace: a Tensor method name_ too (as PyTorch has), noBool, grad, params, paramStyle,
// roundingMode, kernel };
// `doc` is the gx function's JSDoc and the schema's documentation.
// NOTE [ Rounding modes of div ]
// A binary entry with `roundingMode` ('floor', 'trunc') is gx.div(a, b, { roundingMode }) (torch's
// div.Tensor_mode): it has no gx function, Tensor method or C++ face of its own; it goes into the
// generated DIV_ROUNDING table (by mode) instead of BINARY, gx.div and Tensor.div pick it by the
// option (gx.fuse by the option written as a literal, lib/jit/fuse-ops.ts), and autograd records
// it by its name with its own `grad`; C++ has its kernels' raw calls (raw::div_trunc,
// raw::floor_divide). Its kind is the result's dtype rule (arith: integers stay integers, as
// torch's). `kernel: 'other_entry'` shares that entry's schemas and kernels (the same functor and
// compute types) instead of instantiating its own.
// NOTE [ Parameters of elementwise ops ]
// A unary op may take numbers beside its tensor: `params`, each '<type> <name>[=<default>]' with
// type float (a default is required: torch's) or float? (absent: null), in the order of the
// functor's members (NOTE [ Functors with parameters ] in unary/functors.h). They go into the
// schema between self and dtype, to the gx function as numbers after x (paramStyle
// 'positional', the default: gx.leakyRelu(x, 0.2)) or as keys of its options object
// (paramStyle 'options': gx.nanToNum(x, { posinf: 1 })), to the grad formula by their names,
// and to gx.fuse as the call's numbers. `ordered: [a, b]` names two of them of which a may not
// exceed b: the gx function and the method refuse a > b naming both, as torch does
// (hardtanh's "min_val cannot be greater than max_val"). gx.fuse checks it too, of constants
// when the kernel is made and of the fused function's numbers on every call (NOTE [ Argument
// facts in fused functions ] in lib/jit/fuse-facts.ts): a new fact of parameters goes into
// unaryParamsFault (lib/ops/elementwise/elementwise.ts), which both ask.
// NOTE [ Derivatives beside the schemas ]
// `grad` is the op's derivative for autograd, as PyTorch's derivatives.yaml
// writes it: an expression of `grad` (the gradient of the result), `self`,
// `other` and `result` in the formula helpers of lib/autograd/formula-ops.ts
// (gx's elementwise ops, plus tieShare, geluGrad, zeros); a binary op gives
// one per operand ({ self, other }), a unary op one. The generator writes
// them to lib/generated/derivatives.ts; broadcasting is undone by the engine.
// Ops without `grad` (comparisons, logical ops) have no derivative. `grad: 'notImplemented'`:
// the op refuses inputs that require grad, naming itself (NOTE [ One declaration per op ] in
// lib/autograd/declarations.ts), as torch's not-implemented derivatives (floor_divide's).
const binary = (name, functor, computes, group, kind, doc, more = {}) =>
  ({ family: 'binary', name, functor, computes, group, kind, doc, ...more });
const unary = (name, functor, computes, group, kind, doc, more = {}) =>
  ({ family: 'unary', name, functor, computes, group, kind, doc, ...more });
const reduce = (name, functor, computes, group, kind, doc) => ({ family: 'reduce', name, functor, computes, group, kind, doc });
const op = (schema, doc, devices = ['cpu', 'cuda']) => ({ family: 'op', schema, doc, devices });

module.exports = [
  binary('add', 'AddOp', 'kCNumeric', 'arith', 'arith',
    'self + other, elementwise, with NumPy broadcasting and PyTorch\'s type promotion (gx.resultType); either side ' +
    'may be a JS number.', { inplace: true, example: 'gx.add(a, b); gx.add(a, 1); gx.add(a, b, { out: c })', grad: { self: 'grad', other: 'grad' } }),
  binary('sub', 'SubOp', 'kCNumeric | kCNoBool', 'arith', 'arith', 'self - other (not for bool: see logicalXor).',
    { inplace: true, example: 'gx.sub(1, x)', noBool: '; for bool tensors use logicalXor', grad: { self: 'grad', other: 'neg(grad)' } }),
  binary('mul', 'MulOp', 'kCNumeric', 'arith', 'arith', 'self * other.', { inplace: true, example: 'gx.mul(x, 2)', grad: { self: 'mul(grad, other)', other: 'mul(grad, self)' } }),
  binary('div', 'DivOp', 'kCFloating', 'arith', 'div',
    'True division self / other: integer inputs give float32. gx.div with { roundingMode: \'floor\' } or \'trunc\' ' +
    '(torch.div\'s rounding_mode) rounds the quotient down or toward 0 in the common dtype instead, integers exactly ' +
    '(the entries div_floor and div_trunc: NOTE [ Rounding modes of div ]).',
    { inplace: true, example: 'gx.div(gx.arange(4), 2) // [0, 0.5, 1, 1.5]; gx.div(gx.tensor([7, -7]), 2, { roundingMode: \'floor\' }) // [3, -4]', grad: { self: 'div(grad, other)', other: 'neg(div(mul(grad, result), other))' } }),
  binary('pow', 'PowOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'self ** other; integers to negative integer powers are refused.',
    { inplace: true, example: 'gx.pow(x, 2)', noBool: '; convert with .astype() first', grad: { self: 'where(eq(other, 0), 0, mul(grad, mul(other, pow(self, sub(other, 1)))))', other: 'where(logicalAnd(eq(self, 0), ge(other, 0)), 0, mul(grad, mul(result, log(self))))' } }),
  binary('maximum', 'MaximumOp', 'kCNumeric', 'misc', 'arith', 'Elementwise maximum; NaN propagates.',
    { example: 'gx.maximum(x, 0)', grad: { self: 'mul(grad, tieShare(gt(self, other), eq(self, other)))', other: 'mul(grad, tieShare(lt(self, other), eq(self, other)))' } }),
  binary('minimum', 'MinimumOp', 'kCNumeric', 'misc', 'arith', 'Elementwise minimum; NaN propagates.',
    { example: 'gx.minimum(x, y)', grad: { self: 'mul(grad, tieShare(lt(self, other), eq(self, other)))', other: 'mul(grad, tieShare(gt(self, other), eq(self, other)))' } }),
  binary('remainder', 'RemainderOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'Python\'s % (the result has the divisor\'s sign), as torch.remainder; integer x % 0 is 0, as NumPy\'s (torch raises on the CPU), and nothing traps (INT_MIN % -1 is 0).',
    { inplace: true, example: 'gx.remainder(x, 3)', noBool: '; convert with .astype() first', grad: { self: 'grad', other: 'neg(mul(grad, floor(div(self, other))))' } }),
  binary('fmod', 'FmodOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'C\'s fmod, as torch.fmod: the result has the dividend\'s sign (remainder: the divisor\'s); integer x % 0 is 0, as remainder\'s.',
    { inplace: true, example: 'gx.fmod(x, 3)', noBool: '; convert with .astype() first', grad: { self: 'grad', other: 'neg(mul(grad, trunc(div(self, other))))' } }),
  binary('floor_divide', 'FloorDivideOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'self / other rounded toward -inf (Python\'s //), as torch.floor_divide (torch >= 1.13) and gx.div with roundingMode ' +
    '\'floor\': integers exactly in their dtype, integer x // 0 is 0 as remainder\'s (torch raises on the CPU) and ' +
    'INT_MIN // -1 wraps to INT_MIN as NumPy\'s; floats by torch\'s formula (NOTE [ Floor division ] in ' +
    'ops/binary/functors.h), x // 0 is x / 0. No derivative, as torch\'s (div with roundingMode has a zero one).',
    { inplace: true, example: 'gx.floorDivide(gx.tensor([7, -7]), 2) // [3, -4]', noBool: '; convert with .astype() first', grad: 'notImplemented' }),
  binary('div_floor', 'FloorDivideOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'gx.div with roundingMode \'floor\': floor_divide\'s kernels, with a zero derivative (torch\'s div).',
    { roundingMode: 'floor', kernel: 'floor_divide', noBool: '; convert with .astype() first', grad: { self: 'zeros(grad)', other: 'zeros(grad)' } }),
  binary('div_trunc', 'TruncDivideOp', 'kCNumeric | kCNoBool', 'misc', 'arith',
    'gx.div with roundingMode \'trunc\': self / other rounded toward 0 in the common dtype (C\'s integer /), as ' +
    'torch.div(rounding_mode=\'trunc\'): floats trunc(self / other), integers exactly, x / 0 is 0 and INT_MIN / -1 ' +
    'INT_MIN as floor_divide\'s.',
    { roundingMode: 'trunc', noBool: '; convert with .astype() first', grad: { self: 'zeros(grad)', other: 'zeros(grad)' } }),
  binary('atan2', 'Atan2Op', 'kCFloating', 'math', 'div', 'The angle of the point (other, self), in (-pi, pi]: atan(self / other) by quadrant.',
    { inplace: true, example: 'gx.atan2(y, x)', grad: { self: 'div(mul(grad, other), add(mul(self, self), mul(other, other)))', other: 'neg(div(mul(grad, self), add(mul(self, self), mul(other, other))))' } }),
  binary('hypot', 'HypotOp', 'kCFloating', 'math', 'div', 'sqrt(self^2 + other^2) without overflow or underflow on the way.',
    { inplace: true, grad: { self: 'mul(grad, div(self, result))', other: 'mul(grad, div(other, result))' } }),
  binary('logaddexp', 'LogaddexpOp', 'kCFloating', 'math', 'div', 'log(e^self + e^other), stable for large and small operands.',
    { grad: { self: 'div(grad, add(1, exp(sub(other, self))))', other: 'div(grad, add(1, exp(sub(self, other))))' } }),
  binary('copysign', 'CopysignOp', 'kCFloating', 'math', 'div', '|self| with the sign of other (integer inputs give float32, as torch).',
    { inplace: true, grad: { self: 'where(eq(self, 0), 0, mul(grad, div(result, self)))', other: 'zeros(grad)' } }),
  binary('eq', 'EqOp', 'kCNumeric', 'compare', 'compare', 'self == other, as a bool tensor.', { example: 'gx.eq(x, 0)' }),
  binary('ne', 'NeOp', 'kCNumeric', 'compare', 'compare', 'self != other, as a bool tensor.'),
  binary('lt', 'LtOp', 'kCNumeric', 'compare', 'compare', 'self < other, as a bool tensor.'),
  binary('le', 'LeOp', 'kCNumeric', 'compare', 'compare', 'self <= other, as a bool tensor.'),
  binary('gt', 'GtOp', 'kCNumeric', 'compare', 'compare', 'self > other, as a bool tensor.',
    { example: 'gx.where(gx.gt(x, 0), x, 0)' }),
  binary('ge', 'GeOp', 'kCNumeric', 'compare', 'compare', 'self >= other, as a bool tensor.'),
  binary('logical_and', 'LogicalAndOp', 'kCBool', 'logical', 'logical', 'Logical and of "nonzero", as a bool tensor.'),
  binary('logical_or', 'LogicalOrOp', 'kCBool', 'logical', 'logical', 'Logical or of "nonzero", as a bool tensor.'),
  binary('logical_xor', 'LogicalXorOp', 'kCBool', 'logical', 'logical', 'Logical xor of "nonzero", as a bool tensor.'),

  unary('exp', 'ExpOp', 'kCFloating', 'float', 'float', 'e ** x (integer and bool inputs give float32).',
    { inplace: true, example: 'gx.exp(x)', grad: 'mul(grad, result)' }),
  unary('log', 'LogOp', 'kCFloating', 'float', 'float', 'Natural logarithm.', { inplace: true, grad: 'div(grad, self)' }),
  unary('log1p', 'Log1pOp', 'kCFloating', 'float', 'float', 'log(1 + x), accurate near 0.', { inplace: true, grad: 'div(grad, add(self, 1))' }),
  unary('sqrt', 'SqrtOp', 'kCFloating', 'float', 'float', 'Square root.', { inplace: true, grad: 'div(grad, mul(result, 2))' }),
  unary('rsqrt', 'RsqrtOp', 'kCFloating', 'float', 'float', '1 / sqrt(x).', { inplace: true, grad: 'mul(grad, mul(pow(result, 3), -0.5))' }),
  unary('sin', 'SinOp', 'kCFloating', 'float', 'float', 'Sine.', { inplace: true, grad: 'mul(grad, cos(self))' }),
  unary('cos', 'CosOp', 'kCFloating', 'float', 'float', 'Cosine.', { inplace: true, grad: 'neg(mul(grad, sin(self)))' }),
  unary('tanh', 'TanhOp', 'kCFloating', 'activation', 'float', 'Hyperbolic tangent.', { inplace: true, grad: 'mul(grad, sub(1, mul(result, result)))' }),
  unary('sigmoid', 'SigmoidOp', 'kCFloating', 'activation', 'float', '1 / (1 + exp(-x)).', { inplace: true, grad: 'mul(grad, mul(result, sub(1, result)))' }),
  unary('gelu', 'GeluOp', 'kCFloating', 'activation', 'float', 'GELU, the exact (erf) form of torch.nn.functional.gelu.', { grad: 'mul(grad, geluGrad(self))' }),
  unary('softplus', 'SoftplusOp', 'kCFloating', 'activation', 'float',
    'log(1 + exp(x)); x above 20 passes through (torch\'s threshold).', { grad: 'mul(grad, where(gt(self, 20), 1, sigmoid(self)))' }),
  unary('tan', 'TanOp', 'kCFloating', 'trig', 'float', 'Tangent.', { inplace: true, grad: 'mul(grad, add(1, mul(result, result)))' }),
  unary('asin', 'AsinOp', 'kCFloating', 'trig', 'float', 'Arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1].',
    { inplace: true, grad: 'div(grad, sqrt(sub(1, mul(self, self))))' }),
  unary('acos', 'AcosOp', 'kCFloating', 'trig', 'float', 'Arccosine, in [0, pi]; NaN outside [-1, 1].',
    { inplace: true, grad: 'neg(div(grad, sqrt(sub(1, mul(self, self)))))' }),
  unary('atan', 'AtanOp', 'kCFloating', 'trig', 'float', 'Arctangent, in (-pi/2, pi/2).', { inplace: true, grad: 'div(grad, add(1, mul(self, self)))' }),
  unary('sinh', 'SinhOp', 'kCFloating', 'trig', 'float', 'Hyperbolic sine.', { inplace: true, grad: 'mul(grad, cosh(self))' }),
  unary('cosh', 'CoshOp', 'kCFloating', 'trig', 'float', 'Hyperbolic cosine.', { inplace: true, grad: 'mul(grad, sinh(self))' }),
  unary('asinh', 'AsinhOp', 'kCFloating', 'trig', 'float', 'Inverse hyperbolic sine.', { inplace: true, grad: 'div(grad, sqrt(add(mul(self, self), 1)))' }),
  unary('acosh', 'AcoshOp', 'kCFloating', 'trig', 'float', 'Inverse hyperbolic cosine; NaN below 1.',
    { inplace: true, grad: 'div(grad, sqrt(sub(mul(self, self), 1)))' }),
  unary('atanh', 'AtanhOp', 'kCFloating', 'trig', 'float', 'Inverse hyperbolic tangent; +-inf at +-1, NaN beyond.',
    { inplace: true, grad: 'div(grad, sub(1, mul(self, self)))' }),
  unary('expm1', 'Expm1Op', 'kCFloating', 'float', 'float', 'e ** x - 1, accurate near 0.', { inplace: true, grad: 'mul(grad, add(result, 1))' }),
  unary('exp2', 'Exp2Op', 'kCFloating', 'float', 'float', '2 ** x.', { inplace: true, grad: 'mul(grad, mul(result, 0.6931471805599453))' }),
  unary('log2', 'Log2Op', 'kCFloating', 'float', 'float', 'Base-2 logarithm.', { inplace: true, grad: 'div(grad, mul(self, 0.6931471805599453))' }),
  unary('log10', 'Log10Op', 'kCFloating', 'float', 'float', 'Base-10 logarithm.', { inplace: true, grad: 'div(grad, mul(self, 2.302585092994046))' }),
  unary('erf', 'ErfOp', 'kCFloating', 'special', 'float', 'The error function.',
    { inplace: true, grad: 'mul(grad, mul(exp(neg(mul(self, self))), 1.1283791670955126))' }),
  unary('erfc', 'ErfcOp', 'kCFloating', 'special', 'float', '1 - erf(x), accurate where erf(x) is near 1.',
    { inplace: true, grad: 'mul(grad, mul(exp(neg(mul(self, self))), -1.1283791670955126))' }),
  unary('erfinv', 'ErfinvOp', 'kCFloating', 'special', 'float', 'The inverse of erf on (-1, 1); +-inf at +-1, NaN beyond.',
    { inplace: true, grad: 'mul(grad, mul(exp(mul(result, result)), 0.886226925452758))' }),
  unary('reciprocal', 'ReciprocalOp', 'kCFloating', 'float', 'float', '1 / x (integer and bool inputs give float32, as torch).',
    { inplace: true, grad: 'neg(mul(grad, mul(result, result)))' }),
  unary('frac', 'FracOp', 'kCFloating', 'float', 'float', 'x - trunc(x): the fractional part, with x\'s sign.', { inplace: true, grad: 'grad' }),
  unary('silu', 'SiluOp', 'kCFloating', 'activation', 'float', 'x * sigmoid(x) (SiLU, swish).',
    { example: 'gx.silu(x)', grad: 'mul(grad, siluGrad(self))' }),
  unary('mish', 'MishOp', 'kCFloating', 'activation', 'float', 'x * tanh(softplus(x)).', { grad: 'mul(grad, mishGrad(self))' }),
  unary('selu', 'SeluOp', 'kCFloating', 'activation', 'float',
    'scale * (x > 0 ? x : alpha * (e^x - 1)) with alpha 1.6732632423543772 and scale 1.0507009873554805 (torch\'s).',
    { grad: 'where(gt(self, 0), mul(grad, 1.0507009873554805), mul(grad, mul(exp(self), 1.7580993408473766)))' }),
  unary('hardsigmoid', 'HardsigmoidOp', 'kCFloating', 'activation', 'float', 'min(max(x + 3, 0), 6) / 6.',
    { grad: 'where(logicalAnd(gt(self, -3), lt(self, 3)), div(grad, 6), 0)' }),
  unary('log_sigmoid', 'LogSigmoidOp', 'kCFloating', 'activation', 'float', 'log(sigmoid(x)), stable: min(x, 0) - log1p(e^-|x|).',
    { grad: 'mul(grad, sigmoid(neg(self)))' }),
  unary('leaky_relu', 'LeakyReluOp', 'kCFloating', 'activation', 'float', 'x > 0 ? x : negativeSlope * x.',
    { params: ['float negative_slope=0.01'], example: 'gx.leakyRelu(x, 0.2)', grad: 'where(gt(self, 0), grad, mul(grad, negative_slope))' }),
  unary('elu', 'EluOp', 'kCFloating', 'activation', 'float', 'x > 0 ? x : alpha * (e^x - 1).',
    { params: ['float alpha=1'], example: 'gx.elu(x, 0.5)', grad: 'where(gt(self, 0), grad, mul(grad, mul(exp(self), alpha)))' }),
  unary('hardtanh', 'HardtanhOp', 'kCFloating', 'activation', 'float', 'min(max(x, minVal), maxVal); NaN propagates; minVal > maxVal is refused, as torch.',
    { params: ['float min_val=-1', 'float max_val=1'], ordered: ['min_val', 'max_val'], example: 'gx.hardtanh(x, -2, 2)',
      grad: 'where(logicalAnd(gt(self, min_val), lt(self, max_val)), grad, 0)' }),
  unary('square', 'SquareOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'x * x (keeps the dtype: integers wrap; not for bool).',
    { inplace: true, grad: 'mul(grad, mul(self, 2))' }),
  unary('trunc', 'TruncOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Rounds toward zero (integers unchanged).', { inplace: true, grad: 'zeros(self)' }),
  unary('nan_to_num', 'NanToNumOp', 'kCNumeric | kCNoBool', 'keep', 'keep',
    'NaN to nan (0), +inf to posinf, -inf to neginf (absent: the dtype\'s largest and lowest finite values); ' +
    'integers unchanged.',
    { params: ['float nan=0', 'float? posinf', 'float? neginf'], paramStyle: 'options', inplace: true,
      example: 'gx.nanToNum(x, { nan: 0, posinf: 1e4 })', grad: 'where(isfinite(self), grad, 0)' }),
  unary('neg', 'NegOp', 'kCNumeric | kCNoBool', 'keep', 'keep', '-x (keeps the dtype; not for bool).', { inplace: true, grad: 'neg(grad)' }),
  unary('abs', 'AbsOp', 'kCNumeric | kCNoBool', 'keep', 'keep', '|x| (keeps the dtype; not for bool).', { inplace: true, grad: 'mul(grad, sign(self))' }),
  unary('sign', 'SignOp', 'kCNumeric | kCNoBool', 'keep', 'keep', '-1, 0 or 1 by the sign of x; 0 for NaN.',
    { inplace: true, grad: 'zeros(self)' }),
  unary('floor', 'FloorOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Rounds down (integers unchanged).', { inplace: true, grad: 'zeros(self)' }),
  unary('ceil', 'CeilOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'Rounds up (integers unchanged).', { inplace: true, grad: 'zeros(self)' }),
  unary('round', 'RoundOp', 'kCNumeric | kCNoBool', 'keep', 'keep',
    'Rounds to the nearest integer, halves to even as torch.round (integers unchanged).', { inplace: true, grad: 'zeros(self)' }),
  unary('relu', 'ReluOp', 'kCNumeric | kCNoBool', 'keep', 'keep', 'max(x, 0); NaN propagates.',
    { inplace: true, example: 'gx.relu(x)', grad: 'mul(grad, gt(self, 0))' }),

  op('where(Tensor condition, Tensor? self, Tensor? other, float self_scalar, int self_int, float other_scalar, ' +
    'int other_int, ScalarType dtype, Tensor out) -> ()',
  'Elementwise condition ? self : other, broadcasting; an absent self/other is the scalar beside it.'),
  op('clamp(Tensor self, float? min, float? max, int min_int, int max_int, ScalarType dtype, Tensor out) -> ()',
    'Elementwise min(max(self, min), max) with number bounds (each optional); NaN propagates.'),
  op('astype(Tensor self, Tensor out) -> ()', 'Copies self into out (same shape), converting to out\'s dtype.'),
  op('lerp(Tensor self, Tensor end, Tensor? weight, float weight_scalar, ScalarType dtype, Tensor out) -> ()',
    'Elementwise self + weight * (end - self), from the nearer end as torch.lerp (weight 1 gives end exactly), ' +
    'broadcasting, computing in dtype (floating); an absent weight is weight_scalar.'),

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
  op('vector_norm(Tensor self, int[] axis, float ord, ScalarType dtype, Tensor out) -> ()',
    'The vector norm of order ord over axis (all for []), as one reduction computing in dtype (floating): ' +
    '(sum |x|^ord)^(1 / ord), with ord 2 sqrt(sum x^2) unscaled as torch, inf max |x|, -inf min |x|, 0 the count of ' +
    'nonzero elements (ops/reduce/norm.h).'),
  op('cumsum(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()',
    'Inclusive prefix sums along axis (out has self\'s shape), computing in dtype\'s compute type.'),
  op('cumprod(Tensor self, int axis, ScalarType dtype, Tensor out) -> ()',
    'Inclusive prefix products along axis (out has self\'s shape), computing in dtype\'s compute type (integers wrap ' +
    'as int64; the CPU multiplies floats in double, CUDA in the compute type as a tree: NOTE [ One scan, three operations ]).'),
  op('cummax(Tensor self, int axis, Tensor values, Tensor indices) -> ()',
    'The running maximum along axis (values: self\'s dtype and shape) and where it was found (indices: int64); ties and ' +
    'NaNs go to the last index, a NaN is the maximum from its position on, as torch (NOTE [ Running extremum keys ]).'),
  op('cummin(Tensor self, int axis, Tensor values, Tensor indices) -> ()',
    'The running minimum along axis and where it was found, as cummax (ties and NaNs to the last index).'),
  op('gather(Tensor self, int axis, Tensor index, bool wrap, Tensor out) -> ()',
    'out[..., j, ...] = self[..., index[..., j, ...], ...] along axis (out has index\'s shape and self\'s dtype; ' +
    'index int64 or int32, in [0, size), or with wrap in [-size, size)).'),
  op('scatter(Tensor self, int axis, Tensor index, Tensor src, int reduce) -> ()',
    'In place: self[..., index[..., j, ...], ...] = src[..., j, ...] along axis (reduce 0), or += (reduce 1: ' +
    'in index order on the CPU, atomics on CUDA).'),
  op('scatter_reduce(Tensor self, int axis, Tensor index, Tensor src, int reduce) -> ()',
    'In place: self[..., index[..., j, ...], ...] = f(self[..., index[..., j, ...], ...], src[..., j, ...]) along axis, ' +
    'f by reduce: 0 sum, 1 prod, 2 amax, 3 amin (NaN propagates); in index order on the CPU, atomics on CUDA (CAS ' +
    'loops where the hardware has no instruction for the dtype and reduction).'),
  op('index(Tensor self, Tensor[] indices, int[] sizes, int[] strides, int[] dims, Tensor out) -> ()',
    'Advanced indexing: out[p] = self[p + sum_k indices[k][p] * strides[k]], where self and every index (int64 or ' +
    'int32) are views of out\'s shape (stride 0 where they do not vary); index k picks along a dimension of sizes[k] ' +
    'elements (negative values count from the end) named dims[k] in errors.'),
  op('index_put(Tensor self, Tensor[] indices, int[] sizes, int[] strides, int[] dims, Tensor values, bool accumulate) -> ()',
    'In place: self[p + sum_k indices[k][p] * strides[k]] = values[p] (accumulate: +=, atomics on CUDA), the views ' +
    'and indices as index\'s, over values\' shape.'),
  op('nonzero(Tensor self) -> Tensor',
    'The indices of self\'s nonzero elements (NaN counts), int64 [n, ndim] in C order; CUDA reads the count back ' +
    '(one sync) before it allocates the result.'),
  op('masked_select(Tensor self, Tensor mask) -> Tensor',
    'self\'s elements where the bool mask (self\'s shape; either may be a broadcast view) is true, 1-d in C order; ' +
    'CUDA reads the count back (one sync).'),
  op('bincount(Tensor self, Tensor? weights, Tensor out) -> ()',
    'out[self[i]] += weights[i] (or 1) for the non-negative integers of the 1-d self; out (zeroed by the caller: int64 ' +
    'counts, or weights\' float32 / float64) is long enough for every value.'),
  op('histc(Tensor self, float min, float max, Tensor out) -> ()',
    'Adds to the int64 counts out [bins] the elements of self in [min, max] (max > min), element v in bin ' +
    'floor((v - min) * bins / (max - min)), the top edge in the last bin; NaN and values outside are skipped.'),

  op('sort(Tensor self, bool descending, Tensor values, Tensor indices) -> ()',
    'Stable sort of each row (the last dimension) of the contiguous self: values (self\'s dtype) and indices ' +
    '(int64), contiguous, of self\'s shape. NaN sorts as the largest value and -0.0 equal to 0.0 (NOTE [ Sort keys ] ' +
    'in ops/sort/sort_keys.h); on CUDA CUB block, segmented or device-wide radix sorts by row length.'),
  op('topk(Tensor self, int k, bool largest, Tensor values, Tensor indices) -> ()',
    'The k largest (or smallest) elements of each row (the last dimension) of the contiguous self, best first, ties ' +
    'by the lower index: values (self\'s dtype) and indices (int64), contiguous [rows..., k]; on CUDA a per-thread ' +
    'register top-k with a block merge for k <= 32, else a sort of the rows.'),
  op('unique(Tensor self, Tensor? inverse, Tensor? counts, Tensor values) -> int',
    'The distinct values of the contiguous 1-d self, ascending, into the first m elements of values (self\'s size); ' +
    'inverse (int64, self\'s size) gets each element\'s place among them and counts (int64, self\'s size) the first m ' +
    'their counts. Returns m (CUDA: one sync to read it). NaNs are each distinct.'),
  op('searchsorted(Tensor sorted_sequence, Tensor self, bool right, Tensor out) -> ()',
    'For each element of self ([rows, k], contiguous) its insertion point in row r of sorted_sequence ([rows, m], or ' +
    '[1, m] for every row; contiguous; the same dtype): the first i with seq[i] >= v (right: > v), as torch; out ' +
    'int64 or int32 [rows, k].'),

  op('cross_entropy_loss(Tensor self, Tensor target, Tensor? weight, int ignore_index, float label_smoothing, int reduction, ' +
    'bool log_probs, Tensor out, Tensor? lse, Tensor? total_weight) -> int',
    'Cross entropy of class-index targets in one pass (torch\'s cross_entropy / nll_loss): self a contiguous [N, C, D] of ' +
    'scores (log_probs: log-probabilities), target [N D] int64 or int32, weight [C]; out the loss per row (reduction 0), ' +
    'their sum (1) or their sum over the weights of the targets not ignored (2), lse each row\'s logsumexp and ' +
    'total_weight the mean\'s denominator for the backward. Returns ignore_index, or a target out of [0, C) (out left ' +
    'unwritten; CUDA: one sync to read it). ops/loss/cross_entropy.h has the formulas.'),
  op('cross_entropy_loss_backward(Tensor grad, Tensor self, Tensor target, Tensor? weight, Tensor? lse, Tensor? total_weight, ' +
    'int ignore_index, float label_smoothing, int reduction, bool log_probs, Tensor grad_input) -> ()',
    'The gradient of cross_entropy_loss with respect to self, in one pass: grad_input [N, C, D] = G (softmax - the ' +
    'smoothed weighted one-hot) per row (log_probs: -G times the latter), G the incoming gradient (over total_weight for ' +
    'the mean), 0 on ignored rows.'),

  op('rand(Tensor out, int seed, int offset, float low, float high) -> ()',
    'Fills out (contiguous, floating) with Philox4x32-10 draws uniform in [low, high); element j uses counter ' +
    'offset + j / 4 (float64: j / 2).'),
  op('randn(Tensor out, int seed, int offset, float mean, float std) -> ()',
    'Fills out (contiguous, floating) with normal draws (Box-Muller on Philox4x32-10 pairs), counters as rand.'),
  op('randint(Tensor out, int seed, int offset, int low, int high) -> ()',
    'Fills out (contiguous, numeric) with integers uniform in [low, high), counters as rand (64-bit draws: j / 2).'),

  op('matmul(Tensor self, Tensor other, bool allow_tf32, bool trans_self, bool trans_other, Tensor out) -> ()',
    'out[b] = self[b or 0] @ other[b or 0] for [batch, m, k] and [batch, k, n], contiguous on CUDA (cuBLAS; ' +
    'allow_tf32 lets float32 use TF32 tensor cores), any strides on the CPU (a system BLAS, else a built-in kernel); ' +
    'trans_self (trans_other): the tensor passed holds that operand\'s transpose, [batch, k, m] ([batch, n, k]), ' +
    'so a transposed view reaches cuBLAS as a transpose flag instead of a copy.'),
  op('cross(Tensor self, Tensor other, int axis, Tensor out) -> ()',
    'out = self x other along axis (of size 3) in one pass; self, other and out have one shape (broadcast views) ' +
    'and dtype (numeric, not bool) (ops/linalg/cross.h).'),
  op('unfold(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride, int[] grid, Tensor out) -> ()',
    'im2col: self (N, C, H, W) into out (N, C*KH*KW, grid[0]*grid[1]), contiguous, floating; zero outside self ' +
    '(ops/conv/unfold.h, NOTE [ unfold and fold ]).'),
  op('fold(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride, int[] grid, Tensor out) -> ()',
    'col2im, unfold\'s adjoint: out (N, C, H, W), contiguous, is the sum of the columns self (N, C*KH*KW, L) over ' +
    'the windows covering each element, gathered in one order on both devices (ops/conv/unfold.h).'),
  op('max_pool2d_with_indices(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride, Tensor out, ' +
    'Tensor indices) -> ()',
    'Max pooling as torch\'s max_pool2d_with_indices: out (N, C, OH, OW), contiguous, floating, the maximum of each window ' +
    'of self (N, C, H, W) (padding never read, the first maximum wins, NaN propagates) and indices (int64, contiguous) ' +
    'its flat index h * W + w into the plane (ops/conv/max_pool.h, NOTE [ Max pooling with indices ]).'),
  op('max_pool2d_with_indices_backward(Tensor grad_output, Tensor indices, int[] kernel_size, int[] dilation, ' +
    'int[] padding, int[] stride, Tensor grad_input) -> ()',
    'grad_input (N, C, H, W), contiguous: each element the sum of the grad_output (N, C, OH, OW) entries whose index ' +
    'points at it, gathered in one order on both devices, no atomics (ops/conv/max_pool.h).'),
  op('cudnn_version(Device device) -> int',
    'cuDNN\'s version (cudnnGetVersion, e.g. 91900), loading libcudnn.so.9 on first use (GPUEXT_CUDNN_PATH names ' +
    'another file); an error saying why when it does not load (ops/conv/cudnn_api.h).', ['cuda']),
  op('conv_cudnn(Tensor input, Tensor weight, int[] padding, int[] stride, int[] dilation, int groups, ' +
    'bool allow_tf32, bool benchmark, bool check_grad_input, bool check_grad_weight, Tensor out) -> str',
    'out = the convolution (a cross-correlation) of input (N, C, H, W) with weight (OC, C/groups, KH, KW), by ' +
    'cuDNN (the bias is added by gx\'s own kernel: NOTE [ The bias is gx\'s ] in lib/ops/conv/cudnn.ts); all contiguous, one floating dtype; padding, stride, dilation [h, w], symmetric ' +
    'padding. check_grad_*: the backward directions must have an algorithm too. Returns \'\' when done, else why ' +
    'cuDNN refused the configuration, out unwritten (ops/conv/conv_cudnn.h, NOTE [ cuDNN algorithms per shape ]).', ['cuda']),
  op('conv_cudnn_backward_input(Tensor grad_output, Tensor weight, int[] padding, int[] stride, int[] dilation, ' +
    'int groups, bool allow_tf32, bool benchmark, Tensor grad_input) -> ()',
    'grad_input (N, C, H, W) = the gradient of conv_cudnn\'s output with respect to its input, from grad_output ' +
    '(N, OC, OH, OW) and weight (cudnnConvolutionBackwardData); contiguous, one floating dtype.', ['cuda']),
  op('conv_cudnn_backward_weight(Tensor input, Tensor grad_output, int[] padding, int[] stride, int[] dilation, ' +
    'int groups, bool allow_tf32, bool benchmark, Tensor grad_weight) -> ()',
    'grad_weight (OC, C/groups, KH, KW) = the gradient of conv_cudnn\'s output with respect to its weight, from input ' +
    'and grad_output (cudnnConvolutionBackwardFilter); contiguous, one floating dtype.', ['cuda']),
  op('foreach_sgd(Tensor[] params, Tensor[] grads, Tensor[] momentum_buffers, float lr, float momentum, ' +
    'float dampening, float weight_decay, bool nesterov, bool maximize, bool first) -> ()',
    'One SGD step of every parameter of the list, in place, as torch.optim.SGD\'s per parameter, in a few ' +
    'multi-tensor launches (momentum_buffers empty without momentum; first: they are set to the gradient); the lists ' +
    'contiguous, of one floating dtype and device (ops/optim/foreach.h).'),
  op('foreach_adam(Tensor[] params, Tensor[] grads, Tensor[] exp_avgs, Tensor[] exp_avg_sqs, Tensor[] max_exp_avg_sqs, ' +
    'Tensor[] steps, float lr, float beta1, float beta2, float eps, float weight_decay, float neg_step_size, ' +
    'float bias_correction2_sqrt, bool amsgrad, bool maximize, bool decoupled) -> ()',
    'One Adam (decoupled: AdamW) step of every parameter of the list, in place, rounding as the per-parameter op ' +
    'chain; steps empty: the step\'s scalars as given, else each parameter\'s step count (one float64 element, counted ' +
    'up) gives them, on the device (capturable) (ops/optim/foreach.h).'),
  op('svd(Tensor a, bool full, Tensor s, Tensor u, Tensor v) -> ()',
    'SVD of the column-major m x n matrix a ([n, m], m >= n; overwritten): s [n], u [m or n, m], v [n, n], ' +
    'column-major (cuSOLVER gesvdj on CUDA; LAPACK gesdd on the CPU when loaded, else one-sided Jacobi).'),
  op('qr(Tensor a, Tensor? q, Tensor r) -> ()',
    'QR of the row-major m x n matrices a [batch, m, n]: r [batch, k or m, n] and q [batch, m, ' +
    'k or m] row-major (absent: R only); cuSOLVER geqrf + orgqr on CUDA, LAPACK or a built-in Householder QR on the ' +
    'CPU (ops/linalg/decomp.h).'),
  op('cholesky(Tensor a, bool upper, Tensor info) -> ()',
    'Cholesky factors of the row-major matrices a [batch, n, n], in place (L from the lower triangle, or U from the ' +
    'upper), the other triangle zeroed; info [batch] int32: potrf\'s (ops/linalg/decomp.h).'),
  op('solve(Tensor a, Tensor b, Tensor out, Tensor info) -> ()',
    'out = A^-1 B for a [batch, n, n] (overwritten by LU factors), b and out [batch, n, k]; info [batch] int32: ' +
    'getrf\'s (ops/linalg/decomp.h).'),
  op('inv(Tensor a, Tensor out, Tensor info) -> ()',
    'out = A^-1 for a [batch, n, n] (overwritten by LU factors); info [batch] int32: getrf\'s (ops/linalg/decomp.h).'),
  op('det(Tensor a, Tensor out) -> ()',
    'out [batch] = det A for a [batch, n, n] (overwritten by LU factors) (ops/linalg/decomp.h).'),
  op('eigh(Tensor a, bool upper, Tensor w, Tensor v, Tensor info) -> ()',
    'Eigenvalues w [batch, n] (ascending) and eigenvectors v [batch, n, n] (columns) of the symmetric a [batch, n, n] ' +
    '(its upper or lower triangle; overwritten); info [batch] int32: syevd\'s (ops/linalg/decomp.h).'),
  op('backends() -> str',
    'What the CPU matmul and SVD use: lines gemm=<BLAS library or built-in kernel>, lapack=..., kernel=<the ' +
    'built-in kernel\'s instruction set>.', ['cpu']),
  op('set_cpu_blas_enabled(bool on) -> bool',
    'Lets the CPU matmul and SVD use the loaded BLAS / LAPACK (true, the default) or not; returns the previous ' +
    'setting (for tests of the built-in kernels).', ['cpu']),
  op('nccl_version(Device device) -> str', 'NCCL\'s version code (loads libnccl.so.2 on first use, in device\'s context).', ['cuda']),
  op('nccl_unique_id(Device device) -> str', 'A new ncclUniqueId as 256 hex digits, for rank 0 to hand to the others.', ['cuda']),
  op('nccl_comm_init(Device device, str unique_id, int world_size, int rank) -> Handle',
    'Joins the communicator of unique_id as rank of world_size on device (blocks until every rank has joined, ' +
    'unless between nccl_group calls: one process driving several devices joins each inside one group); ' +
    'returns its handle (NOTE [ NCCL communicators ]).', ['cuda']),
  op('nccl_comm_destroy(Device device, Handle comm, bool abort) -> ()', 'Destroys (or aborts) a communicator of device.', ['cuda']),
  op('nccl_comm_error(Device device, Handle comm) -> str',
    'The communicator\'s asynchronous error (a peer gone, a network failure), or \'\' when none.', ['cuda']),
  op('nccl_group(Device device, bool start) -> ()',
    'ncclGroupStart (start) or ncclGroupEnd: the calls between them, on several devices, are launched as one.', ['cuda']),
  op('nccl_collective(Tensor input, Tensor output, Handle comm, str kind, int op, int peer) -> ()',
    'Enqueues one collective on the current stream of the tensors\' device: kind is a row\'s ncclKind in the ' +
    'collective table (ops/dist/collective-list.js), op its ncclRedOp_t, peer the root or the other rank.', ['cuda']),
  op('set_gemm_kernel(str name) -> str',
    'Makes the built-in CPU GEMM use the named micro-kernel (avx512f, avx2+fma, generic; \'\' keeps it) and ' +
    'returns the one in use (for tests of each kernel).', ['cpu']),
];
