// gx.fuse applies the facts the eager ops check of their number operands
// (NOTE [ Argument facts in fused functions ] in lib/jit/fuse-facts.ts):
// hardtanh's ordered bounds (the op list's `ordered`), an integer op's range
// for a JS number, pow's negative integer exponent; of constants when the
// kernel is made, of the function's number arguments on every call. A call
// whose numbers the eager op refuses runs unfused, and the eager op's error is
// what the caller gets; the fused kernel ran with them before (hardtanh with
// its bounds crossed, an int32 add of 2^40 wrapped). Without a GPU the kernel
// a call would run is asked of fusedKernel and source() (the same path as the
// call); with one, the call itself.
import test from 'ava';

import * as gx from '../lib';
import { fusedKernel } from '../lib/jit/fuse';
import { deviceTestSerial } from './helpers';

/** The message of what `f` throws (and that it throws a RangeError). */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return e.message;
  }
  throw new Error('not refused');
}

const ordered = gx.fuse(function ordered(x: gx.Tensor, lo: number, hi: number) { return gx.hardtanh(x, lo, hi); });
const crossed = gx.fuse(function crossed(x: gx.Tensor) { return gx.hardtanh(x, 2, -2); });
const mirrored = gx.fuse(function mirrored(x: gx.Tensor, a: number) { return gx.hardtanh(gx.mul(x, 3), -a, a); });
const viaConst = gx.fuse(function viaConst(x: gx.Tensor, a: number) { const lo = a * 2; return gx.hardtanh(x, lo); });  // maxVal: its default 1
const added = gx.fuse(function added(x: gx.Tensor, n: number) { return gx.add(x, n); });
const powered = gx.fuse(function powered(x: gx.Tensor, n: number) { return gx.pow(x, n); });
const chosen = gx.fuse(function chosen(c: gx.Tensor, x: gx.Tensor, n: number) { return gx.where(c, x, n); });

test('a fused function refuses, by running unfused, the numbers its eager ops refuse: constants when made, arguments per call', (t) => {
  gx.tidy(() => {
    const x = gx.randn([6]), xi = gx.tensor(new Int32Array([1, 2, 3])), xl = xi.astype('int64');
    const eager = refusal(() => gx.hardtanh(x, 2, -2));
    t.is(eager, 'gx.hardtanh: minVal cannot be greater than maxVal, got minVal 2 and maxVal -2');
    t.throws(() => crossed.source(x), { message: `gx.fuse(crossed): runs unfused: ${eager}` }, 'constants: refused when the kernel is made');
    t.is(fusedKernel(crossed, x), undefined);
    t.truthy(fusedKernel(ordered, x, -2, 2), 'bounds in order: fused');
    t.is(fusedKernel(ordered, x, 2, -2), undefined, 'crossed bounds as arguments: this call runs unfused');
    t.throws(() => ordered.source(x, 2, -2), { message: `gx.fuse(ordered): runs unfused: ${eager}` });
    t.truthy(fusedKernel(ordered, x, -2, 2), 'the next call with bounds in order fuses again');
    t.truthy(fusedKernel(mirrored, x, 1));
    t.throws(() => mirrored.source(x, -1), { message: /runs unfused: gx\.hardtanh: minVal cannot be greater than maxVal, got minVal 1 and maxVal -1$/ });
    t.throws(() => mirrored.source(x, -1.5), { message: /got minVal 1\.5 and maxVal -1\.5$/ });
    t.truthy(fusedKernel(viaConst, x, 0.5), 'a const of the arguments: minVal 1, maxVal 1');
    t.throws(() => viaConst.source(x, 0.75), { message: /got minVal 1\.5 and maxVal 1$/ });
    // An integer op's JS number must fit the dtype it computes in; pow refuses an integer to a negative power.
    const big = 2 ** 40;
    const range = refusal(() => gx.add(xi, big));
    t.throws(() => added.source(xi, big), { message: `gx.fuse(added): runs unfused: ${range}` });
    t.truthy(fusedKernel(added, xi, 5));
    t.truthy(fusedKernel(added, xl, big), 'int64 holds 2^40');
    t.truthy(fusedKernel(added, x, big), 'float32 takes any number');
    t.throws(() => chosen.source(gx.gt(xi, 1), xi, big), { message: /runs unfused: gx\.where: the number 1099511627776 is out of range for int32/ });
    t.throws(() => powered.source(xi, -1), { message: /runs unfused: gx\.pow: integers to negative integer powers are not allowed/ });
    t.truthy(fusedKernel(powered, xi, 2));
    t.truthy(fusedKernel(powered, x, -1), 'a float to a negative power');
    const literal = gx.fuse(function literal(v: gx.Tensor) { return gx.add(v, 1099511627776); });
    t.throws(() => literal.source(xi), { message: /runs unfused: gx\.add: the number 1099511627776 is out of range for int32/ });
  });
});

test('numbers the host cannot work out leave the function unfused, saying so; a JS boolean is no parameter', (t) => {
  gx.tidy(() => {
    const x = gx.randn([6]);
    const changed = gx.fuse(function changed(v: gx.Tensor, a: number) { let lo = a; lo = lo - 1; return gx.hardtanh(v, lo, a); });
    t.throws(() => changed.source(x, 1), { message: /runs unfused: the numbers gx\.hardtanh checks must be known on the host/ });
    t.deepEqual(changed(x, 1).toArraySync(), gx.hardtanh(x, 0, 1).toArraySync());
    const clip = gx.jit.device(function clip(v: number, m: number) { return gx.hardtanh(v as never, -m, m) as never as number; });
    const inDevice = gx.fuse(function inDevice(v: gx.Tensor, m: number) { return clip(v as never, m) as never as gx.Tensor; });
    t.throws(() => inDevice.source(x, 1), { message: /runs unfused: the numbers gx\.hardtanh checks must be known on the host/ });
    const flag = gx.fuse(function flag(v: gx.Tensor) { return gx.hardtanh(v, true as never); });
    t.throws(() => flag.source(x), { message: /runs unfused: .*gx\.hardtanh is not an elementwise op gx\.fuse can fuse/ });
    t.throws(() => flag(x), { instanceOf: TypeError, message: /^gx\.hardtanh: minVal must be a number/ });
  });
});

deviceTestSerial('a fused call throws the eager op\'s error for the numbers it refuses, and fuses the next good call', (t, device) => {
  gx.tidy(() => {
    const x = gx.randn([64], { device }), xi = gx.tensor(new Int32Array([1, -2, 3, 7]), { device });
    const cases: { what: string; fused: () => unknown; eager: () => unknown; good: () => [gx.Tensor, gx.Tensor] }[] = [
      { what: 'crossed bounds', fused: () => ordered(x, 2, -2), eager: () => gx.hardtanh(x, 2, -2), good: () => [ordered(x, -0.5, 0.5), gx.hardtanh(x, -0.5, 0.5)] },
      { what: 'crossed by arithmetic', fused: () => mirrored(x, -1), eager: () => gx.hardtanh(gx.mul(x, 3), 1, -1), good: () => [mirrored(x, 1), gx.hardtanh(gx.mul(x, 3), -1, 1)] },
      { what: 'a constant pair', fused: () => crossed(x), eager: () => gx.hardtanh(x, 2, -2), good: () => [ordered(x, -2, 2), gx.hardtanh(x, -2, 2)] },
      { what: '2^40 to int32', fused: () => added(xi, 2 ** 40), eager: () => gx.add(xi, 2 ** 40), good: () => [added(xi, 5), gx.add(xi, 5)] },
      { what: 'int32 to a negative power', fused: () => powered(xi, -1), eager: () => gx.pow(xi, -1), good: () => [powered(xi, 3), gx.pow(xi, 3)] },
    ];
    for (const c of cases) {
      t.is(refusal(c.fused), refusal(c.eager), c.what);
      const [got, want] = c.good();
      t.deepEqual(got.toArraySync(), want.toArraySync(), `${c.what}: the next call`);
    }
  });
});
