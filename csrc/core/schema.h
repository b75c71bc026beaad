// Op schemas: the parsed form of an op's signature string, e.g.
//   "topk(Tensor x, int k, int dim=-1, *, bool largest=True) -> (Tensor values, Tensor indices)"
// The grammar is a subset of PyTorch's function schema language: the types
// below, defaults, `*` for keyword-only arguments and tuple returns. Alias
// annotations (`Tensor(a!)`), namespaces and overload names (`aten::add.Tensor`)
// are not part of it: the registry gives the namespace separately, and gpuext
// ops do not mutate their inputs behind the caller's back.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuext/abi.h"

namespace gx::core {

// NOTE [ Handles and devices in schemas ]
// `Handle` is an opaque value an op returns for a later call to take back (a
// communicator, a plan): 64 bits that only the library which made it gives a
// meaning to. JS holds it as a tagged object it can neither make nor read,
// and the binding refuses one made by another library's op, so a number or a
// string never stands in for it. `Device` is a device ('cpu', 'cuda:N'); an
// op with no tensor arguments runs on its first Device argument's device,
// which is how an op that only manages state (a communicator) reaches its
// CUDA implementation. Neither has a default but None (`Handle? h=None`).
enum class ArgType : int32_t { Tensor, TensorList, Int, Float, Bool, Str, IntList, ScalarType, Handle, Device };

// A parsed default. `kind` is GX_VALUE_NONE for `None`; otherwise the value kind
// that matches the argument's type, and the one field it names is set:
// INT -> i, FLOAT -> f, BOOL -> b, STR -> s, INT_LIST -> ints, DTYPE -> dtype (a gx_dtype).
struct DefaultValue {
  gx_value_kind kind = GX_VALUE_NONE;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
  int32_t dtype = 0;
};

// `Tensor?` is {Tensor, optional}; `int[]?` is {IntList, optional}.
struct SchemaType {
  ArgType type;
  bool optional = false;
};

struct Argument {
  std::string name;
  SchemaType type;
  bool kwarg_only = false;  // declared after `*`
  std::optional<DefaultValue> default_value;
};

struct Return {
  std::string name;  // empty when the schema gives none (names exist only inside a tuple)
  SchemaType type;
};

struct Schema {
  std::string name;             // e.g. "add_gpu"
  std::vector<Argument> args;
  std::vector<Return> returns;  // empty for "-> ()"
  bool returns_tuple = false;   // "-> (A, B)" and "-> (A)"; false for "-> A" and "-> ()"
  std::string text;             // to_string(*this): the canonical form
};

// Parses `text`; throws gx::core::Error(ErrorKind::Value) whose message starts with
// `invalid schema "<text>": ` and says what was expected and at which column.
Schema parse_schema(const std::string& text);

// Canonical text: single spaces, `*` before the first keyword-only argument,
// floats that re-parse to the same double and always show they are floats
// ("1."), strings in double quotes, dtypes by name. parse_schema(to_string(s))
// gives back s.
std::string to_string(const Schema& s);

// "Tensor", "Tensor?", "Tensor[]", "int[]?", "ScalarType", ...
std::string type_to_string(const SchemaType& t);

}  // namespace gx::core
