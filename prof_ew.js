// temporary: where an allocating elementwise call's time goes (cpu profile)
const gx = require('./dist/lib');
const { allocate } = require('./dist/lib/creation');
const a = gx.tensor(new Float32Array([1]), { device: 'cuda' });
const b = gx.tensor(new Float32Array([2]), { device: 'cuda' });
const c = gx.empty([1], { device: 'cuda' });
const ew = gx.elementwiseKernel('T x, T y', 'T z', 'z = x + y', { name: 'p_ew' });
const mode = process.argv[2];
const f = mode === 'alloc' ? () => ew(a, b).dispose() : mode === 'passed' ? () => ew(a, b, c) : mode === 'allocOnly' ? () => allocate(a.shape, 'float32', a.device, a).dispose() : () => { ew(a, b, c); allocate(a.shape, 'float32', a.device, a).dispose(); };
for (let i = 0; i < 20000; i++) f();
gx.cuda.synchronize();
const t0 = process.hrtime.bigint();
for (let r = 0; r < 100; r++) { for (let i = 0; i < 1000; i++) f(); gx.cuda.synchronize(); }
console.log(mode, (Number(process.hrtime.bigint() - t0) / 1e3 / 100000).toFixed(2), 'us/call');
