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
