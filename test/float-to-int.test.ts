// Floats converted to integer dtypes beyond their range, NaN and the
// infinities among them (NOTE [ Floats out of an integer's range ] in
// csrc/include/gpuext/float_to_int.h): astype gives torch 2.13's CPU values
// on every device, where C++ leaves the conversion undefined and CUDA's
// saturation gave other values than the CPU (1e255 into uint8 was 255 on
// CUDA, 0 on the CPU). The values were computed with torch.Tensor.to.
import test from 'ava';

import * as gx from '../lib';
import { deviceTest } from './helpers';

const VALUES = [3000000005.0, -3000000007.0, 1099511627779.0, 1e+30, -1e+255, Infinity, -Infinity, NaN, -0.5, 255.9, 256.2, 300.7, -5.5, -129.9, 32768.5, -2147483648.0, 2147483647.9, 9.2e+18, -9.3e+18];

// torch.tensor(VALUES, dtype=torch.float64).to(source).to(integer dtype), as integers.
const TORCH: Record<string, readonly bigint[]> = {
  'float64>uint8': [5n, 249n, 3n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 0n, 44n, 251n, 127n, 0n, 0n, 255n, 0n, 0n],
  'float64>int8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, -1n, 0n, 44n, -5n, 127n, 0n, 0n, -1n, 0n, 0n],
  'float64>int16': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 256n, 300n, -5n, -129n, -32768n, 0n, -1n, 0n, 0n],
  'float64>int32': [-2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -2147483648n, 2147483647n, -2147483648n, -2147483648n],
  'float64>int64': [3000000005n, -3000000007n, 1099511627779n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -2147483648n, 2147483647n, 9200000000000000000n, -9223372036854775808n],
  'float32>uint8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 0n, 44n, 251n, 127n, 0n, 0n, 0n, 0n, 0n],
  'float32>int8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, -1n, 0n, 44n, -5n, 127n, 0n, 0n, 0n, 0n, 0n],
  'float32>int16': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 256n, 300n, -5n, -129n, -32768n, 0n, 0n, 0n, 0n],
  'float32>int32': [-2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -2147483648n, -2147483648n, -2147483648n, -2147483648n],
  'float32>int64': [3000000000n, -3000000000n, 1099511627776n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -2147483648n, 2147483648n, 9200000267938955264n, -9223372036854775808n],
  'float16>uint8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 0n, 44n, 251n, 127n, 0n, 0n, 0n, 0n, 0n],
  'float16>int8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, -1n, 0n, 44n, -5n, 127n, 0n, 0n, 0n, 0n, 0n],
  'float16>int16': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 255n, 256n, 300n, -5n, -129n, -32768n, 0n, 0n, 0n, 0n],
  'float16>int32': [-2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -2147483648n, -2147483648n, -2147483648n, -2147483648n],
  'float16>int64': [-9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, 0n, 255n, 256n, 300n, -5n, -129n, 32768n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n],
  'bfloat16>uint8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 44n, 251n, 126n, 0n, 0n, 0n, 0n, 0n],
  'bfloat16>int8': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 44n, -5n, 126n, 0n, 0n, 0n, 0n, 0n],
  'bfloat16>int16': [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 256n, 256n, 300n, -5n, -130n, -32768n, 0n, 0n, 0n, 0n],
  'bfloat16>int32': [-2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, -2147483648n, 0n, 256n, 256n, 300n, -5n, -130n, 32768n, -2147483648n, -2147483648n, -2147483648n, -2147483648n],
  'bfloat16>int64': [3003121664n, -3003121664n, 1099511627776n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, -9223372036854775808n, 0n, 256n, 256n, 300n, -5n, -130n, 32768n, -2147483648n, 2147483648n, 9187343239835811840n, -9223372036854775808n],
};

const as = (t: gx.Tensor): bigint[] => Array.from(t.toArraySync() as ArrayLike<number | bigint>, (v) => BigInt(v));

deviceTest('a float out of an integer dtype\'s range converts as torch\'s CPU build, on every device', (t, device) => {
  gx.tidy(() => {
    const x = gx.tensor(VALUES, { dtype: 'float64', device });
    for (const [key, want] of Object.entries(TORCH)) {
      const [source, target] = key.split('>') as [gx.DType, gx.DType];
      t.deepEqual(as(x.astype(source).astype(target)), want, `${key} on ${device}`);
    }
  });
});

test('the table covers every floating source and integer target', (t) => {
  t.is(Object.keys(TORCH).length, 4 * 5);
  t.true(Object.values(TORCH).every((v) => v.length === VALUES.length));
});
