// Limits the core, the built-in ops, extensions and the TypeScript side share,
// written once here: lib/generated/limits.ts is generated from this file
// (scripts/gen/limits.js reads its GX_ #define lines; `npm run gen`
// regenerates, CI checks it is current). The macros are plain C so a C user
// of the ABI can read them; C++ gets typed constants beside them.
#pragma once

// A tensor has at most this many dimensions: checked at creation; a layout
// passes to a kernel by value and loops size their per-dimension arrays by it.
#define GX_MAX_DIMS 16

#ifdef __cplusplus
namespace gx {
constexpr int kMaxDims = GX_MAX_DIMS;
}  // namespace gx
#endif
