// What the build tests share: temporary projects (C++ and CUDA), a counting
// compiler wrapper, and the CLI run as a child process.
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import * as gx from '../lib';
import { BuildError } from '../lib/toolkit/errors';
import { detectToolchain } from '../lib/toolkit/toolchain';

export const root = path.resolve(__dirname, '../..');
export const cli = path.join(root, 'dist/lib/cli/main.js');
export const HAS_NVCC = detectToolchain().nvcc !== undefined;
export const CU_ARCH = gx.cuda.isAvailable() ? 'native' : 'sm_80';
export const nvccTest = HAS_NVCC ? test : test.skip;

export const tmpdirs: string[] = [];
test.after.always(() => {
  for (const d of tmpdirs) fs.rmSync(d, { recursive: true, force: true });
});

export function tmpdir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `gpuext-${prefix}-`));
  tmpdirs.push(d);
  return d;
}

export function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** A CPU-only op: y = 2x (float32). `name` keeps op names unique per test. */
export function twiceCpp(lib: string, extra = ''): string {
  return `#include <gpuext/extension.h>
#include "scale.h"
${extra}
namespace {
gx::Tensor twice(const gx::Tensor& x) {
  GX_CHECK(x.dtype() == gx::kFloat32, "expected float32, got ", x.dtype());
  gx::Tensor y = gx::empty_like(x);
  const float* px = x.data_ptr<float>();
  float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) py[i] = SCALE * px[i];
  return y;
}
}  // namespace
GX_LIBRARY(${lib}, m) {
  m.def("twice(Tensor x) -> Tensor", "Doubles every element.").impl(gx::kCPU, twice);
}
`;
}

/** A project with one .cpp op and a local header. */
export function cppProject(name: string, extra: Record<string, unknown> = {}): string {
  const dir = tmpdir(name);
  write(dir, {
    'setup.config.json': JSON.stringify({ name, sources: ['ops/**/*.cpp'], runtimeImport: root, ...extra }),
    'ops/twice.cpp': twiceCpp(name),
    'ops/scale.h': '#pragma once\n#define SCALE 2.0f\n',
  });
  return dir;
}

/** A project with one .cu op (CUDA and CPU implementations). */
export function cuProject(name: string): string {
  const dir = tmpdir(name);
  write(dir, {
    'setup.config.json': JSON.stringify({ name, sources: ['ops/*.cu'], arch: CU_ARCH, runtimeImport: root }),
    'ops/add.cu': `#include <gpuext/extension.h>
namespace {
__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
gx::Tensor add_cuda(const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  gx::Tensor c = gx::empty_like(a);
  add_kernel<<<gx::blocks(a.numel()), 256, 0, gx::current_stream()>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.numel());
  GX_CHECK_LAUNCH();
  return c;
}
gx::Tensor add_cpu(const gx::Tensor& a, const gx::Tensor& b) {
  GX_CHECK(a.sizes() == b.sizes(), "shapes differ: ", a.sizes(), " vs ", b.sizes());
  gx::Tensor c = gx::empty_like(a);
  for (int64_t i = 0; i < a.numel(); ++i) c.data_ptr<float>()[i] = a.data_ptr<float>()[i] + b.data_ptr<float>()[i];
  return c;
}
}  // namespace
GX_LIBRARY(${name}, m) {
  m.def("add(Tensor a, Tensor b) -> Tensor", "Adds.").impl(gx::kCUDA, add_cuda).impl(gx::kCPU, add_cpu);
}
`,
  });
  return dir;
}

/** A compiler wrapper that logs each call, so a test can tell whether a build ran a compiler. */
export function countingWrapper(dir: string, real: string, name: string): { exe: string; calls: () => number } {
  const exe = path.join(dir, 'tools', 'bin', name);
  const logFile = path.join(dir, 'tools', 'calls.log');
  write(dir, { [path.relative(dir, exe)]: `#!/bin/sh\necho "$*" >> '${logFile}'\nexec '${real}' "$@"\n` });
  fs.chmodSync(exe, 0o755);
  return {
    exe,
    calls: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length : 0),
  };
}

export function buildErr(t: ExecutionContext, e: unknown): BuildError {
  if (!(e instanceof BuildError)) {
    t.fail(`expected a BuildError, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    throw e;
  }
  return e;
}

export function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd, env: { ...process.env, CI: '1', ...env } }, (err, stdout, stderr) => {
      const code = err && 'code' in err && typeof err.code === 'number' ? err.code : err ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
