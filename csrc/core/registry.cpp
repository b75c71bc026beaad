#include "core/registry.h"

#include <cctype>
#include <unordered_map>

#include "base/error.h"

namespace gx::core {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<OpDef>> ops;  // never shrinks: ids stay valid
  std::unordered_map<std::string, int32_t> by_name;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: ops may be called during exit
  return *r;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

std::string schema_signature(const Schema& s) {
  std::string out;
  for (size_t i = 0; i < s.args.size(); ++i) out += (i ? "," : "") + type_to_string(s.args[i].type);
  out += "->";
  if (s.returns.empty()) return out + "()";
  if (!s.returns_tuple) return out + type_to_string(s.returns[0].type);
  out += "(";
  for (size_t i = 0; i < s.returns.size(); ++i) out += (i ? "," : "") + type_to_string(s.returns[i].type);
  return out + ")";
}

int32_t Registrar::def(const std::string& ns, const std::string& schema, const std::string& doc) {
  GX_CHECK_VALUE(is_identifier(ns), "GX_LIBRARY: namespace '", ns, "' must be an identifier");
  auto op = std::make_unique<OpDef>();
  op->schema = parse_schema(schema);
  op->ns = ns;
  op->qualified = ns + "::" + op->schema.name;
  op->doc = doc;
  op->library = library_;
  for (const auto& other : pending_) {
    GX_CHECK_VALUE(other->qualified != op->qualified, "duplicate op '", op->qualified,
                   "': defined twice in ", library_);
  }
  pending_.push_back(std::move(op));
  return static_cast<int32_t>(pending_.size() - 1);
}

void Registrar::derivative(int32_t op, const std::string& formula) {
  GX_CHECK_RANGE(op >= 0 && op < static_cast<int32_t>(pending_.size()), "derivative: unknown op index ", op);
  OpDef& def = *pending_[static_cast<size_t>(op)];
  GX_CHECK_VALUE(formula.find(':') != std::string::npos, def.qualified, ": derivative '", formula,
                 "' must read 'inputs: backward_op(arguments)', e.g. 'x: cube_backward(grad, x)'");
  GX_CHECK_VALUE(def.derivative.empty(), def.qualified, ": a derivative is declared twice");
  def.derivative = formula;
}

void Registrar::impl(int32_t op, gx_device_type device, gx_boxed_fn fn, void* ctx,
                     const std::string& signature) {
  GX_CHECK_RANGE(op >= 0 && op < static_cast<int32_t>(pending_.size()), "impl: unknown op index ", op);
  GX_CHECK_VALUE(device == GX_CPU || device == GX_CUDA, "impl: unknown device type ", device);
  OpDef& def = *pending_[static_cast<size_t>(op)];
  const char* dev = device == GX_CPU ? "CPU" : "CUDA";
  GX_CHECK_VALUE(def.impls[device].fn == nullptr, def.qualified, ": a ", dev,
                 " implementation is registered twice");
  const std::string expected = schema_signature(def.schema);
  GX_CHECK_TYPE(signature == expected, def.qualified, ": the ", dev, " implementation's C++ signature is (",
                signature, ") but the schema '", def.schema.text, "' needs (", expected, ")");
  def.impls[device] = OpImpl{fn, ctx};
}

std::vector<const OpDef*> Registrar::commit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& op : pending_) {
    GX_CHECK_VALUE(op->impls[GX_CPU].fn != nullptr || op->impls[GX_CUDA].fn != nullptr, op->qualified,
                   ": defined without any implementation (add .impl(gx::kCPU, ...) or .impl(gx::kCUDA, ...))");
    auto it = r.by_name.find(op->qualified);
    if (it != r.by_name.end()) {
      fail(ErrorKind::Value, "duplicate op '", op->qualified, "': already registered by ",
           r.ops[static_cast<size_t>(it->second)]->library, " (loading ", library_, ")");
    }
  }
  std::vector<const OpDef*> out;
  for (auto& op : pending_) {
    op->id = static_cast<int32_t>(r.ops.size());
    r.by_name[op->qualified] = op->id;
    out.push_back(op.get());
    r.ops.push_back(std::move(op));
  }
  pending_.clear();
  return out;
}

const OpDef& op_by_id(int64_t id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  GX_CHECK_RANGE(id >= 0 && id < static_cast<int64_t>(r.ops.size()), "no registered op has id ", id);
  return *r.ops[static_cast<size_t>(id)];
}

const OpDef& op_by_name(const std::string& qualified) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(qualified);
  if (it == r.by_name.end()) {
    const bool builtin = qualified.rfind("gx_ops::", 0) == 0;
    // The built-in ops load before any extension gpuext loads (lib/extension/runtime.ts), so a
    // missing one is an ops library older than the extension's <gpuext/ops.h>.
    fail(ErrorKind::Value, "no registered op is named '", qualified, "'",
         builtin ? " (the built-in ops are missing or older than the <gpuext/ops.h> this extension was built with: "
                   "rebuild them with `npm rebuild gpuext --build-from-source`)"
                 : " (load the library that defines it first)");
  }
  return *r.ops[static_cast<size_t>(it->second)];
}

}  // namespace gx::core
