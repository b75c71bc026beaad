// The op registry: every op of every loaded extension, by id and by
// qualified name ("ns::name"), with its parsed schema and one boxed
// implementation per device type. Process-wide (decision 1 of docs/DESIGN.md).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/schema.h"
#include "gpuext/abi.h"

// The registrar an extension's init fills, and an op as the C ABI hands it out
// (gpuext/abi.h: opaque there).
struct gx_registrar {};
struct gx_op {};

namespace gx::core {

struct OpImpl {
  gx_boxed_fn fn = nullptr;
  void* ctx = nullptr;
};

struct OpDef : gx_op {
  int32_t id = -1;           // index in the registry once committed
  std::string ns;
  std::string qualified;     // "ns::name"
  Schema schema;
  std::string doc;
  std::string derivative;    // "x: op_backward(grad, x)", or empty (lib/tape/schema-derivative.ts reads it)
  std::string library;       // path of the extension that defined it
  OpImpl impls[2];           // [GX_CPU], [GX_CUDA]
  int32_t num_returns() const { return static_cast<int32_t>(schema.returns.size()); }
};

// Collects one extension's definitions; they reach the registry only when the
// whole init succeeded (commit), so a failing extension leaves nothing behind.
class Registrar : public gx_registrar {
 public:
  explicit Registrar(std::string library) : library_(std::move(library)) {}
  int32_t def(const std::string& ns, const std::string& schema, const std::string& doc);
  void impl(int32_t op, gx_device_type device, gx_boxed_fn fn, void* ctx, const std::string& signature);
  void derivative(int32_t op, const std::string& formula);
  // Moves the definitions into the registry; duplicates of registered names throw.
  std::vector<const OpDef*> commit();
  // The definitions, for describing an extension without registering it.
  const std::vector<std::unique_ptr<OpDef>>& pending() const { return pending_; }

 private:
  std::string library_;
  std::vector<std::unique_ptr<OpDef>> pending_;
};

// The registered op with this id; throws a RangeError when there is none.
const OpDef& op_by_id(int64_t id);
// The registered op named `qualified` ("gx_ops::add"); throws a ValueError
// naming it when there is none (and, for a built-in op, that the built-in ops
// are not loaded or are out of date).
const OpDef& op_by_name(const std::string& qualified);
// The schema's types spelled as impl signatures are ("Tensor,float->Tensor").
std::string schema_signature(const Schema& s);

}  // namespace gx::core
