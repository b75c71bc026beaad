import test from 'ava';
import {
  bfloat16BitsToFloat32,
  decodeBFloat16,
  decodeFloat16,
  encodeBFloat16,
  encodeFloat16,
  float16BitsToFloat32,
  float32ToBFloat16Bits,
  float32ToFloat16Bits,
} from '../lib/core/half';

const isF16NaN = (h: number): boolean => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
const isBF16NaN = (h: number): boolean => (h & 0x7f80) === 0x7f80 && (h & 0x7f) !== 0;

test('float16: every bit pattern round-trips through decode/encode', (t) => {
  let bad = 0;
  for (let h = 0; h < 65536; h++) {
    const v = float16BitsToFloat32(h);
    const back = float32ToFloat16Bits(v);
    if (isF16NaN(h)) {
      if (!Number.isNaN(v) || back !== 0x7e00) bad++;
    } else if (back !== h) {
      bad++;
    }
  }
  t.is(bad, 0);
});

test('float16: decode of well-known patterns', (t) => {
  t.is(float16BitsToFloat32(0x3c00), 1);
  t.is(float16BitsToFloat32(0xc000), -2);
  t.is(float16BitsToFloat32(0x7bff), 65504);
  t.is(float16BitsToFloat32(0x0001), 2 ** -24);
  t.is(float16BitsToFloat32(0x03ff), 1023 * 2 ** -24);
  t.is(float16BitsToFloat32(0x0400), 2 ** -14);
  t.is(float16BitsToFloat32(0x7c00), Infinity);
  t.is(float16BitsToFloat32(0xfc00), -Infinity);
  t.true(Number.isNaN(float16BitsToFloat32(0x7e00)));
  t.true(Object.is(float16BitsToFloat32(0x8000), -0));
  t.true(Object.is(float16BitsToFloat32(0x0000), 0));
});

test('float16: rounding ties go to even', (t) => {
  t.is(float32ToFloat16Bits(1 + 2 ** -11), 0x3c00); // tie between 1 and 1+2^-10 -> 1
  t.is(float32ToFloat16Bits(1 + 3 * 2 ** -11), 0x3c02); // tie -> 1 + 2^-9
  t.is(float16BitsToFloat32(float32ToFloat16Bits(1 + 3 * 2 ** -11)), 1 + 2 ** -9);
  t.is(float32ToFloat16Bits(-(1 + 2 ** -11)), 0xbc00);
  t.is(float32ToFloat16Bits(1 + 2 ** -11 + 2 ** -30), 0x3c01); // just above the tie
  t.is(float32ToFloat16Bits(2048 + 1), 0x6800); // 2049 -> 2048 (ulp 2 there)
  t.is(float32ToFloat16Bits(2048 + 3), 0x6802); // 2051 -> 2052
});

test('float16: rounds once, directly from the float64 value (no double rounding)', (t) => {
  // Math.fround(1 + 2^-11 + 2^-40) === 1 + 2^-11 (a tie that would go down to 1),
  // but the exact value is above the tie, so it must round up.
  const x = 1 + 2 ** -11 + 2 ** -40;
  t.is(Math.fround(x), 1 + 2 ** -11);
  t.is(float32ToFloat16Bits(x), 0x3c01);
  const out = new Uint16Array(1);
  encodeFloat16([x], out);
  t.is(out[0], 0x3c01);
  encodeFloat16(Float64Array.of(x), out);
  t.is(out[0], 0x3c01);
  // A Float32Array holds the float32 value, which is a true tie.
  encodeFloat16(Float32Array.of(x), out);
  t.is(out[0], 0x3c00);
});

test('float16: subnormals', (t) => {
  t.is(float32ToFloat16Bits(2 ** -24), 0x0001);
  t.is(float32ToFloat16Bits(2 ** -25), 0x0000); // tie between 0 and 2^-24 -> even (0)
  t.is(float32ToFloat16Bits(-(2 ** -25)), 0x8000);
  t.is(float32ToFloat16Bits(2 ** -25 + 2 ** -60), 0x0001);
  t.is(float32ToFloat16Bits(3 * 2 ** -26), 0x0001); // 0.75 * 2^-24 -> 2^-24
  t.is(float32ToFloat16Bits(3 * 2 ** -25), 0x0002); // 1.5 ulp tie -> 2 (even)
  t.is(float32ToFloat16Bits(5 * 2 ** -25), 0x0002); // 2.5 ulp tie -> 2 (even)
  t.is(float32ToFloat16Bits(2 ** -26), 0x0000);
  t.is(float32ToFloat16Bits(1e-300), 0x0000);
  t.is(float32ToFloat16Bits(Number.MIN_VALUE), 0x0000);
  t.is(float32ToFloat16Bits(2 ** -14 - 2 ** -25), 0x0400); // rounds up into the smallest normal
  t.is(float32ToFloat16Bits(1023 * 2 ** -24), 0x03ff);
});

test('float16: overflow, infinities, NaN and signed zero', (t) => {
  t.is(float32ToFloat16Bits(65504), 0x7bff);
  t.is(float32ToFloat16Bits(65519), 0x7bff);
  t.is(float32ToFloat16Bits(65519.99), 0x7bff);
  t.is(float32ToFloat16Bits(65520), 0x7c00); // tie with "65536" -> even -> Inf
  t.is(float32ToFloat16Bits(-65520), 0xfc00);
  t.is(float32ToFloat16Bits(1e6), 0x7c00);
  t.is(float32ToFloat16Bits(1e300), 0x7c00);
  t.is(float32ToFloat16Bits(Infinity), 0x7c00);
  t.is(float32ToFloat16Bits(-Infinity), 0xfc00);
  t.is(float32ToFloat16Bits(NaN), 0x7e00);
  t.is(float32ToFloat16Bits(-NaN), 0x7e00);
  t.is(float32ToFloat16Bits(-0), 0x8000);
  t.is(float32ToFloat16Bits(0), 0x0000);
});

test('float16: every midpoint between neighbours rounds to even, and nudges round to the nearer', (t) => {
  let bad = 0;
  for (let h = 0; h < 0x7c00; h++) {
    const lo = float16BitsToFloat32(h);
    // For 0x7bff the upper neighbour is 2^16 (where Inf starts when rounding).
    const hi = h === 0x7bff ? 65536 : float16BitsToFloat32(h + 1);
    const mid = (lo + hi) / 2; // exact in float64
    const nudge = mid * 2 ** -40;
    const even = (h & 1) === 0 ? h : h + 1;
    for (const sign of [0, 0x8000]) {
      const s = sign === 0 ? 1 : -1;
      if (float32ToFloat16Bits(s * mid) !== (sign | even)) bad++;
      if (float32ToFloat16Bits(s * (mid - nudge)) !== (sign | h)) bad++;
      if (float32ToFloat16Bits(s * (mid + nudge)) !== (sign | (h + 1))) bad++;
    }
  }
  t.is(bad, 0);
});

test('float16: bulk encode/decode match the scalar functions on all patterns', (t) => {
  const bits = new Uint16Array(65536);
  for (let h = 0; h < 65536; h++) bits[h] = h;
  const decoded = new Float32Array(65536);
  decodeFloat16(bits, decoded);
  const fromF32 = new Uint16Array(65536);
  encodeFloat16(decoded, fromF32);
  const fromArray = new Uint16Array(65536);
  encodeFloat16(Array.from(decoded), fromArray);
  let bad = 0;
  for (let h = 0; h < 65536; h++) {
    const v = float16BitsToFloat32(h);
    if (Number.isNaN(v) ? !Number.isNaN(decoded[h]) : !Object.is(decoded[h], v)) bad++;
    const want = isF16NaN(h) ? 0x7e00 : h;
    if (fromF32[h] !== want || fromArray[h] !== want) bad++;
  }
  t.is(bad, 0);
});

test('float16: Float32Array and float64 encode paths agree on random float32 values', (t) => {
  const n = 100_000;
  const src = new Float32Array(n);
  const u32 = new Uint32Array(src.buffer);
  let seed = 12345;
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    u32[i] = seed;
  }
  const a = new Uint16Array(n);
  const b = new Uint16Array(n);
  encodeFloat16(src, a);
  encodeFloat16(Array.from(src), b);
  let bad = 0;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) bad++;
  t.is(bad, 0);
});

test('float16: bulk functions respect subarray offsets and check lengths', (t) => {
  const big = new Float32Array([9, 1, 2, 0.5, 9]);
  const out = new Uint16Array(3);
  encodeFloat16(big.subarray(1, 4), out);
  t.deepEqual(Array.from(out), [0x3c00, 0x4000, 0x3800]);
  const dec = new Float32Array(6);
  decodeFloat16(out, dec.subarray(2));
  t.deepEqual(Array.from(dec), [0, 0, 1, 2, 0.5, 0]);
  t.throws(() => encodeFloat16([1, 2, 3], new Uint16Array(2)), { instanceOf: RangeError });
  t.throws(() => decodeFloat16(new Uint16Array(3), new Float32Array(2)), { instanceOf: RangeError });
  t.throws(() => encodeBFloat16([1, 2, 3], new Uint16Array(2)), { instanceOf: RangeError });
  t.throws(() => decodeBFloat16(new Uint16Array(3), new Float32Array(2)), { instanceOf: RangeError });
});

test('bfloat16: every bit pattern round-trips through decode/encode', (t) => {
  let bad = 0;
  for (let h = 0; h < 65536; h++) {
    const v = bfloat16BitsToFloat32(h);
    const back = float32ToBFloat16Bits(v);
    if (isBF16NaN(h)) {
      if (!Number.isNaN(v) || back !== 0x7fc0) bad++;
    } else if (back !== h) {
      bad++;
    }
  }
  t.is(bad, 0);
});

test('bfloat16: known values, ties to even, specials', (t) => {
  t.is(float32ToBFloat16Bits(1), 0x3f80);
  t.is(float32ToBFloat16Bits(-2), 0xc000);
  t.is(bfloat16BitsToFloat32(0x3f80), 1);
  t.is(bfloat16BitsToFloat32(0x4049), 3.140625);
  t.is(float32ToBFloat16Bits(1 + 2 ** -8), 0x3f80); // tie -> even (1)
  t.is(float32ToBFloat16Bits(1 + 3 * 2 ** -8), 0x3f82); // tie -> even (1 + 2^-6)
  t.is(float32ToBFloat16Bits(1 + 2 ** -8 + 2 ** -20), 0x3f81);
  t.is(float32ToBFloat16Bits(3.14159), 0x4049);
  t.is(float32ToBFloat16Bits(NaN), 0x7fc0);
  t.is(float32ToBFloat16Bits(Infinity), 0x7f80);
  t.is(float32ToBFloat16Bits(-Infinity), 0xff80);
  t.is(float32ToBFloat16Bits(3.4028234663852886e38), 0x7f80); // float32 max rounds up to Inf
  t.is(float32ToBFloat16Bits(-0), 0x8000);
  t.is(float32ToBFloat16Bits(2 ** -149), 0x0000); // smallest float32 subnormal -> 0
  t.is(float32ToBFloat16Bits(2 ** -133), 0x0001); // smallest bfloat16 subnormal
  t.true(Object.is(bfloat16BitsToFloat32(0x8000), -0));
  t.true(Number.isNaN(bfloat16BitsToFloat32(0xffc1)));
});

test('bfloat16: every midpoint between finite neighbours rounds to even', (t) => {
  let bad = 0;
  for (let h = 0; h < 0x7f80; h++) {
    const lo = bfloat16BitsToFloat32(h);
    const hi = h === 0x7f7f ? 2 ** 128 : bfloat16BitsToFloat32(h + 1);
    const mid = (lo + hi) / 2; // exactly representable in float32
    if (Math.fround(mid) !== mid) bad++;
    const even = (h & 1) === 0 ? h : h + 1;
    if (float32ToBFloat16Bits(mid) !== even) bad++;
    if (float32ToBFloat16Bits(-mid) !== (0x8000 | even)) bad++;
  }
  t.is(bad, 0);
});

test('bfloat16: bulk encode/decode match the scalar functions', (t) => {
  const bits = new Uint16Array(65536);
  for (let h = 0; h < 65536; h++) bits[h] = h;
  const decoded = new Float32Array(65536);
  decodeBFloat16(bits, decoded);
  const fromF32 = new Uint16Array(65536);
  encodeBFloat16(decoded, fromF32);
  const fromArray = new Uint16Array(65536);
  encodeBFloat16(Array.from(decoded), fromArray);
  let bad = 0;
  for (let h = 0; h < 65536; h++) {
    const v = bfloat16BitsToFloat32(h);
    if (Number.isNaN(v) ? !Number.isNaN(decoded[h]) : !Object.is(decoded[h], v)) bad++;
    const want = isBF16NaN(h) ? 0x7fc0 : h;
    if (fromF32[h] !== want || fromArray[h] !== want) bad++;
  }
  t.is(bad, 0);
  // Plain numbers are taken to float32 first.
  const out = new Uint16Array(2);
  encodeBFloat16([0.1, 1 + 2 ** -8], out);
  t.deepEqual(Array.from(out), [float32ToBFloat16Bits(Math.fround(0.1)), 0x3f80]);
});

test('bulk conversions handle millions of elements', (t) => {
  const n = 2_000_000;
  const src = new Float32Array(n);
  for (let i = 0; i < n; i++) src[i] = (i % 2001) - 1000 + 0.25;
  const h16 = new Uint16Array(n);
  const back = new Float32Array(n);
  encodeFloat16(src, h16);
  decodeFloat16(h16, back);
  t.is(back[0], -1000); // -999.75 is a float16 tie between -999.5 and -1000 -> even
  t.is(back[1000], 0.25);
  t.is(back[n - 1], src[n - 1]);
  encodeBFloat16(src, h16);
  decodeBFloat16(h16, back);
  t.is(back[1000], 0.25);
  t.is(back[1], -1000); // -998.75: bfloat16 steps by 4 in [512, 1024)
});
