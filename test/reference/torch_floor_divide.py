#!/usr/bin/env python3
"""Figures for test/ops-floor-divide.test.ts: torch.floor_divide and
torch.div(rounding_mode='trunc') on the CPU, on edge and random inputs.

Run: python3 test/reference/torch_floor_divide.py > test/floor-divide-torch-figures.ts
Each case gives its operands (a tensor: dtype, shape and values; or a number)
and torch's results (dtype, shape, values); float16 and bfloat16 as torch
computes them on CUDA, in float32 (in_float32). Integer divisors are never 0 here
(torch raises ZeroDivisionError on the CPU, gx gives 0: the test says so
itself), nor INT_MIN / -1 in int32 (torch's CPU kernel traps; gx wraps as
NumPy, checked by the test).
"""
import math
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from js_literals import js_number  # noqa: E402

rng = random.Random(7)
cases = []


def fmt(v, dtype):
    if dtype == 'int64':
        return f'{int(v)}n'
    if isinstance(v, bool):
        return '1' if v else '0'
    return js_number(v)


def tensor_of(values, dtype, shape=None):
    t = torch.tensor(values, dtype=torch.float64 if dtype.startswith(('float', 'bfloat')) else getattr(torch, dtype))
    t = t.to(getattr(torch, dtype))
    return t.reshape(shape) if shape is not None else t


def face(x):
    if isinstance(x, torch.Tensor):
        dtype = str(x.dtype).replace('torch.', '')
        vals = x.double().flatten().tolist() if x.is_floating_point() else x.flatten().tolist()
        return '{ dtype: \'%s\', shape: %s, values: [%s] }' % (dtype, list(x.shape), ', '.join(fmt(v, dtype) for v in vals))
    return '{ number: %s }' % fmt(x, 'float64')


def in_float32(f, a, b):
    """f(a, b), float16 and bfloat16 computing in float32 and rounding once: torch's CUDA kernels and its CPU
    scalar loop (its vectorized CPU loop for two 16-bit tensors rounds each step of the floor division to the
    16-bit type, so its result differs from its own scalar loop's, e.g. bfloat16 97 // -0.2598 gives -376
    there, -374 in float32)."""
    r = f(a, b)
    if r.dtype not in (torch.float16, torch.bfloat16):
        return r
    up = lambda x: x.float() if isinstance(x, torch.Tensor) and x.dtype == r.dtype else x
    return f(up(a), up(b)).to(r.dtype)


def case(name, a, b):
    fl = in_float32(torch.floor_divide, a, b)
    tr = in_float32(lambda x, y: torch.div(x, y, rounding_mode='trunc'), a, b)
    cases.append('  {\n    name: %r,\n    a: %s,\n    b: %s,\n    floor: %s,\n    trunc: %s,\n  },'
                 % (name, face(a), face(b), face(fl), face(tr)))


# Floats: signed zeros, infinities, NaN, x / 0, quotients that round up to an integer (1 // 0.1 is 9), random.
SPECIAL_A = [7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0, 5.0, -5.0, 1.0, 0.0, -0.0, math.inf, -math.inf, math.nan,
             3.0, -3.0, 1e30, -1e-30, 6.0, 0.5, 2.0, -2.0, 1e-3, 0.0, 5.0]
SPECIAL_B = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 0.0, -0.0, 0.0, 0.1, -2.0, -2.0, 2.0, 2.0, 2.0,
             math.inf, math.inf, 7.0, 3.0, -math.inf, 0.1, 0.2, 0.2, 1e-4, 0.0, math.nan]
for dtype in ['float32', 'float64', 'float16', 'bfloat16']:
    big = 6e4 if dtype == 'float16' else 1e6
    a = SPECIAL_A + [rng.uniform(-100, 100) for _ in range(36)] + [rng.uniform(-big, big) for _ in range(8)]
    b = SPECIAL_B + [rng.choice([-1, 1]) * rng.uniform(0.01, 20) for _ in range(36)] + \
        [rng.choice([-1, 1]) * rng.uniform(1e-3, 3) for _ in range(8)]
    case(f'{dtype}: signed zeros, infinities, NaN, x / 0, random', tensor_of(a, dtype), tensor_of(b, dtype))

# Integers: the ends of each range, negative operands both sides, random (nonzero divisors).
for dtype, lo, hi in [('int8', -128, 127), ('int16', -32768, 32767), ('int32', -2**31, 2**31 - 1),
                      ('int64', -2**63, 2**63 - 1), ('uint8', 0, 255)]:
    if lo < 0:
        a = [lo, hi, 7, -7, 7, -7, 0, 1, -1, lo + 1, hi, lo, lo, hi]
        b = [1, -1, 2, 2, -2, -2, 5, 3, 3, 2, -3, 3, hi, lo]
    else:
        a, b = [0, 255, 7, 200, 1, 254], [3, 2, 2, 255, 7, 9]
    for _ in range(24):
        a.append(rng.randint(lo, hi))
        d = 0
        while d == 0 or d == -1:
            d = rng.randint(max(lo, -50), min(hi, 50)) if rng.random() < 0.5 else rng.randint(lo, hi)
        b.append(d)
    case(f'{dtype}: range ends, negative operands, random', tensor_of(a, dtype), tensor_of(b, dtype))

# Numbers on either side, promotion, broadcasting.
ints = tensor_of([7, -7, 9, -9, 0, 100], 'int32')
case('int32 tensor, number 2.5: float32', ints, 2.5)
case('number 7.5, int64 tensor: float32', 7.5, tensor_of([2, -2, 3, -3, 4, 1], 'int64'))
case('int32 tensor, number -3: int32', ints, -3)
case('number -7, int16 tensor: int16', -7, tensor_of([2, -2, 3, -3, 4, 1], 'int16'))
case('float16 tensor, number -0.75: float16', tensor_of([7.0, -7.0, 0.5, -0.5, 1e4, -3.0], 'float16'), -0.75)
case('int64 tensor, float32 tensor: float32', tensor_of([7, -7, 2**40 + 1, -(2**40) - 1], 'int64'),
     tensor_of([2.0, 2.0, -3.0, 3.0], 'float32'))
case('int8 tensor, int16 tensor: int16', tensor_of([-128, 127, -7, 7], 'int8'), tensor_of([-300, 2, 2, -2], 'int16'))
case('uint8 tensor, int8 tensor: int16', tensor_of([255, 200, 7, 0], 'uint8'), tensor_of([-1, -3, 2, -128], 'int8'))
case('bool tensor, int32 tensor: int32', torch.tensor([True, False, True, True]), tensor_of([1, 3, -1, 2], 'int32'))
case('int32 tensor, 0-d float64 tensor: float32', ints, torch.tensor(-2.5, dtype=torch.float64))
case('float16 tensor, 0-d float64 tensor: float16', tensor_of([7.0, -7.0, 5.5, -0.25], 'float16'),
     torch.tensor(1.5, dtype=torch.float64))
case('float32 [3, 1], float32 [4]: [3, 4]', tensor_of([7.5, -7.5, 0.0], 'float32', [3, 1]),
     tensor_of([2.0, -2.0, 0.5, -0.0], 'float32'))
case('int64 [2, 1, 3], int64 [4, 1]: [2, 4, 3]', tensor_of(list(range(-9, 9, 3)), 'int64', [2, 1, 3]),
     tensor_of([4, -4, 5, -5], 'int64', [4, 1]))

print('// generated by test/reference/torch_floor_divide.py (torch %s, CPU) -- do not edit' % torch.__version__)
print('/* eslint-disable */')
print('export type Figure = { dtype: string; shape: number[]; values: (number | bigint)[] } | { number: number };')
print('export interface FloorDivideCase { name: string; a: Figure; b: Figure; floor: Figure; trunc: Figure }')
print('export const FLOOR_DIVIDE_CASES: FloorDivideCase[] = [')
print('\n'.join(cases))
print('];')
