// Converting an op call's arguments from JS values (or the staging area) to
// gx_values and its returns back, shared by the N-API functions that call ops
// (NOTE [ Op calls ] in op_functions.cpp; NOTE [ Staged op calls ] here, in op_values.cpp).
#pragma once
#include <napi.h>

#include <list>
#include <string>
#include <vector>

#include "core/registry.h"

namespace gx::core::js {

// Storage for what the converted arguments point into. Lists, not vectors:
// elements never move (a string's characters would), and a call without such
// arguments (most) allocates nothing.
struct CallScratch {
  // The staged result request for an empty tensor argument (NOTE [ Recycled handles ]); null once spent.
  const double* request = nullptr;
  std::list<std::string> strings;
  std::list<std::vector<int64_t>> int_lists;
  std::list<std::vector<gx_tensor*>> tensor_lists;
};

// A call's argument or return values, zeroed (GX_VALUE_NONE): on the stack for
// the usual few, on the heap beyond (an op call is a few microseconds; two
// allocations showed).
class CallValues {
 public:
  explicit CallValues(size_t n) : n_(n) {
    if (n > kInline) {
      heap_.resize(n);
      data_ = heap_.data();
    }
    for (size_t i = 0; i < n; ++i) data_[i] = gx_value{};
  }
  CallValues(const CallValues&) = delete;
  CallValues& operator=(const CallValues&) = delete;
  gx_value* data() { return data_; }
  size_t size() const { return n_; }
  gx_value& operator[](size_t i) { return data_[i]; }
  gx_value* begin() { return data_; }
  gx_value* end() { return data_ + n_; }

 private:
  static_assert(GX_VALUE_NONE == 0, "a zeroed gx_value is GX_VALUE_NONE");
  static constexpr size_t kInline = 16;
  gx_value inline_[kInline];
  std::vector<gx_value> heap_;
  gx_value* data_ = inline_;
  size_t n_;
};

// One argument from its JS value by the schema (count, kind, int range, defaults); tensors through `scratch.request`.
gx_value convert_arg(const OpDef& op, const Argument& a, const Napi::Value& v, CallScratch& scratch);

// One non-tensor argument from its staging slots (NOTE [ Staged op calls ]).
gx_value staged_arg(const OpDef& op, const Argument& a, const double* slot);

// `spare`: an empty handle for a returned tensor (NOTE [ Recycled handles ]); spent (emptied) when used.
Napi::Value to_js(Napi::Env env, const OpDef& op, gx_value& v, Napi::Value* spare = nullptr);

// The OpDef of a registry id, remembered per thread.
const OpDef& cached_op(int64_t id);

// Calls the op on converted arguments and gives its returns to JS (a returned tensor into `spare` when there is one).
Napi::Value invoke_to_js(Napi::Env env, const OpDef& op, CallValues& args, Napi::Value& spare);

}  // namespace gx::core::js
