// An MNIST-shaped classifier trained with gx.nn on every device: images of
// 1x28x28 in 10 classes (each class a random template plus noise, so there
// is something to learn), Conv2d + ReLU + MaxPool2d + Flatten + Linear,
// crossEntropy, AdamW and a cosine schedule, 200 steps of 16 images. The loss
// must fall to a fraction of its start, the classifier must get most of the
// training images right, and no tensor may be left behind.
import * as gx from '../lib';
import { deviceTestSerial, rng } from './helpers';

const CLASSES = 10, POOL = 160, BATCH = 16, STEPS = 200;

/** POOL images (POOL, 1, 28, 28) and labels: template[label] + noise, from a fixed seed. */
function dataset(d: gx.DeviceLike): { images: gx.Tensor; labels: gx.Tensor } {
  const r = rng(2024);
  const templates = Array.from({ length: CLASSES }, () => Array.from({ length: 784 }, () => 2 * r() - 1));
  const labels = Array.from({ length: POOL }, (_, i) => i % CLASSES);
  const pixels = labels.flatMap((c) => templates[c].map((v) => v + 1.5 * (2 * r() - 1)));
  return gx.tidy(() => ({
    images: gx.tensor(pixels, { device: d }).reshape([POOL, 1, 28, 28]),
    labels: gx.tensor(labels, { dtype: 'int64', device: d }),
  }));
}

deviceTestSerial('an MNIST-shaped Conv2d classifier trains 200 steps with AdamW and a cosine schedule, the loss falling, nothing left behind', (t, d) => {
  const live = gx.memory.stats(d).liveTensors;
  gx.manualSeed(0);
  const model = new gx.nn.Sequential(
    new gx.nn.Conv2d(1, 4, 5), new gx.nn.ReLU(), new gx.nn.MaxPool2d(2), new gx.nn.Flatten(), new gx.nn.Linear(4 * 12 * 12, CLASSES),
  ).to(d);
  const opt = new gx.optim.AdamW(model.parameters(), { lr: 3e-3 });
  const sched = new gx.optim.lrScheduler.CosineAnnealingLR(opt, { tMax: STEPS });
  const { images, labels } = dataset(d);
  const losses: number[] = [];
  for (let step = 0; step < STEPS; step++) {
    const at = (step * BATCH) % POOL;
    opt.zeroGrad();
    losses.push(gx.tidy(() => {
      const loss = gx.nn.functional.crossEntropy(model.call(images.slice(0, at, at + BATCH)), labels.slice(0, at, at + BATCH));
      loss.backward();
      return Number(loss.item());
    }));
    opt.step();
    sched.step();
  }
  const first = losses.slice(0, 10).reduce((a, b) => a + b) / 10, last = losses.slice(-10).reduce((a, b) => a + b) / 10;
  t.true(first > 1.5, `the first losses are near log(10): ${first}`);
  t.true(last < 0.2 * first, `the loss falls substantially: ${first} -> ${last}`);
  const accuracy = gx.tidy(() => Number(gx.mean(gx.eq(gx.argmax(model.call(images), 1), labels).astype('float32')).item()));
  t.true(accuracy > 0.9, `training accuracy ${accuracy}`);
  t.true(Math.abs(opt.paramGroups[0].lr) < 1e-6, 'the cosine schedule ends at etaMin 0');
  opt.dispose();
  model.dispose();
  images.dispose();
  labels.dispose();
  t.is(gx.memory.stats(d).liveTensors, live, 'no tensor left behind');
});
