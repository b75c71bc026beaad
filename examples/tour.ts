// A tour of the gpuext tensor core: run with `npm run demo`.
// Uses the GPU when there is one, else the CPU.
import * as gx from '../lib';

async function main(): Promise<void> {
  const device = gx.cuda.isAvailable() ? 'cuda' : 'cpu';
  if (device === 'cuda') {
    const p = gx.cuda.getDeviceProperties();
    console.log(`GPU: ${p.name} (sm_${p.major}${p.minor}, ${(p.totalMemory / 2 ** 30).toFixed(1)} GiB)`);
  } else {
    console.log(`no GPU (${gx.cuda.unavailableReason()}): running on the CPU`);
  }

  // Creation on the device, from nested arrays, typed arrays and ranges.
  using a = gx.tensor([[1, 2, 3], [4, 5, 6]], { device });
  using r = gx.arange(12, { dtype: 'float32', device });
  using l = gx.linspace(0, 1, 5, { dtype: 'float16', device });
  console.log(`${a}\n${r}\n${l}`);

  // Views share storage; reshape copies only when it must.
  using m = r.view(3, 4);
  using tr = m.asStrided([4, 3], [1, 4], 0);  // the transpose, as a strided view
  using flat = tr.reshape(-1);                // not viewable: copied, in C order
  console.log(`view ${JSON.stringify(m.shape)} shares storage; transposed reshape copies:\n${flat}`);

  // Readback that does not block the event loop.
  const values = await m.toArray();
  console.log(`await toArray(): ${values.length} values, last = ${values[values.length - 1]}`);

  // Moves between devices, and memory statistics.
  using host = m.cpu();
  const s = gx.memory.stats(device);
  console.log(`on ${host.device}: ${host.shape}; ${device} allocator: ${s.liveTensors} live tensors, ` +
    `${s.allocatedBytes} bytes allocated, ${s.cachedBytes} cached`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
