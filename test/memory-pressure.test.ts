// Forgotten tensors are freed under memory pressure even inside a synchronous
// loop (NOTE [ Finalizers inside the GC ] in csrc/binding/tagged_external.h
// and NOTE [ Memory pressure ] in csrc/binding/tensor_handle.cpp).
// dispose() and tidy() remain the way to free memory promptly.
import * as gx from '../lib';
import { deviceTestSerial } from './helpers';

deviceTestSerial('1,000 forgotten 4 MiB tensors in a synchronous loop do not pile up', (t, device) => {
  const before = gx.memory.stats(device).allocatedBytes;
  let peak = 0;
  for (let i = 0; i < 1000; i++) {
    gx.ones([1 << 20], { device });  // forgotten on purpose
    peak = Math.max(peak, gx.memory.stats(device).allocatedBytes - before);
  }
  t.true(peak < 1024 * 2 ** 20, `peak ${(peak / 2 ** 20).toFixed(0)} MiB of forgotten tensors (4000 MiB if none were collected)`);
});

// The other side of NOTE [ Memory pressure ]: a loop that disposes what it
// makes (a training step, an L-BFGS evaluation) must not start a major
// collection per round. Reporting each handle's bytes to V8 at once did:
// 80 MiB made and disposed per round kept crossing V8's external-memory limit
// (29 major or incremental collections in these 200 rounds on the CPU; about
// 0.1 ms per 4 MiB tensor on the GPU).
/** Major or incremental collections while `round` runs `rounds` times (after `warm` untimed rounds). */
async function majorCollections(round: () => void, warm: number, rounds: number): Promise<number> {
  const { PerformanceObserver, constants } = await import('perf_hooks');
  for (let i = 0; i < warm; i++) round();  // past the run of explicit disposals that turns the steps on
  await new Promise((r) => setImmediate(r));
  let major = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) major++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  for (let i = 0; i < rounds; i++) round();
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 10));
  obs.disconnect();
  return major;
}

deviceTestSerial('a loop that disposes 80 MiB of tensors per round starts (almost) no major collection', async (t, device) => {
  const round = (): void => gx.tidy(() => { for (let i = 0; i < 20; i++) gx.empty([1 << 20], { device }); });
  const major = await majorCollections(round, 300, 200);
  t.true(major < 8, `${major} major or incremental collections in 200 rounds (29 when every handle was reported at once)`);
});

// A round whose live peak is larger than one report step (a training step of
// 64 MiB activations): 320 MiB live at once, all disposed. Reporting the peak
// and un-reporting it every round started a collection per round; the
// headroom of NOTE [ Memory pressure ] keeps what V8 sees flat.
deviceTestSerial('a loop with 320 MiB live at its peak, disposed each round, starts (almost) no major collection', async (t, device) => {
  const round = (): void => gx.tidy(() => { for (let i = 0; i < 20; i++) gx.empty([4 << 20], { device }); });
  const major = await majorCollections(round, 300, 100);
  t.true(major < 8, `${major} major or incremental collections in 100 rounds`);
});
