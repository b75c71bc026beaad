// Op schema parsing and rendering: a hand-written recursive-descent parser for
// the subset of PyTorch's function schema grammar that gpuext supports.
//
//   schema  := NAME '(' [ param (',' param)* ] ')' '->' returns END
//   param   := '*' | type NAME [ '=' default ]
//   type    := BASE [ '[' ']' ] [ '?' ]      BASE: Tensor int float bool str ScalarType Handle Device
//   returns := '(' ')' | '(' type [ NAME ] (',' type [ NAME ])* ')' | type
//   default := None | True | False | true | false | STRING | DTYPE
//            | [+-]NUMBER | [+-]inf | [+-]nan | '[' [ int (',' int)* ] ']'
//
// Which defaults and type suffixes are legal depends on the type, so the
// parser checks them as it goes rather than in a second pass: that way every
// error can point at the column where things went wrong.
#include "core/schema.h"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <limits>
#include <locale>
#include <sstream>
#include <unordered_set>

#include "base/dtype.h"
#include "base/error.h"

namespace gx::core {
namespace {

template <typename... Args>
[[noreturn]] void schema_fail(const std::string& text, const Args&... args) {
  fail(ErrorKind::Value, "invalid schema \"", text, "\": ", args...);
}

// ASCII only and no <cctype>: its answers depend on the C locale, and a
// negative char is undefined behaviour there.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Streams with the classic locale, not strtod/printf: those follow the C
// locale, and a host that set LC_NUMERIC to e.g. de_DE would read "1.5" as 1.
bool parse_double(const std::string& s, double& out) {
  std::istringstream is(s);
  is.imbue(std::locale::classic());
  is >> out;
  return !is.fail() && is.peek() == std::char_traits<char>::eof();
}

// The shortest %.Ng (N = 15..17) that reads back as the same double, with a
// '.' added when it would otherwise look like an int: "1." not "1".
std::string render_float(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string s;
  for (int precision = 15; precision <= 17; ++precision) {
    std::ostringstream os;
    os.imbue(std::locale::classic());
    os << std::setprecision(precision) << v;
    s = os.str();
    double back = 0;
    if (parse_double(s, back) && back == v) break;
  }
  if (s.find_first_of(".eni") == std::string::npos) s += '.';
  return s;
}

std::string quote(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;  // anything else the lexer takes as written
    }
  }
  return out + '"';
}

std::string dtype_names() {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) out += str(i ? ", " : "", dtype_name(static_cast<DType>(i)));
  return out;
}

struct Token {
  enum Kind { Ident, Number, String, Punct, Arrow, End } kind = End;
  std::string text;         // Ident, Number: as written; String: the decoded value
  char punct = 0;           // Punct: the character
  size_t pos = 0, end = 0;  // byte offsets in the schema text
};

// Tokens are produced on demand, so an error is reported at the first place
// it occurs in the text, whichever of lexer and parser finds it.
class Lexer {
 public:
  explicit Lexer(const std::string& src) : src_(src) {}

  Token next() {
    while (i_ < src_.size() && is_space(src_[i_])) ++i_;
    Token t;
    t.pos = i_;
    if (i_ == src_.size()) {
      t.end = i_;
      return t;
    }
    const char c = src_[i_];
    if (is_ident_start(c)) {
      while (i_ < src_.size() && is_ident_char(src_[i_])) ++i_;
      t.kind = Token::Ident;
      t.text = src_.substr(t.pos, i_ - t.pos);
    } else if (is_digit(c) || (c == '.' && is_digit(at(i_ + 1)))) {
      lex_number();
      t.kind = Token::Number;
      t.text = src_.substr(t.pos, i_ - t.pos);
    } else if (c == '"' || c == '\'') {
      t.kind = Token::String;
      t.text = lex_string(c);
    } else if (c == '-' && at(i_ + 1) == '>') {
      t.kind = Token::Arrow;
      i_ += 2;
    } else {
      // Any other character is punctuation; the parser says whether it fits.
      t.kind = Token::Punct;
      t.punct = c;
      ++i_;
    }
    t.end = i_;
    return t;
  }

 private:
  char at(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  // digits [ '.' digits ] [ (e|E) [+-] digits ]; signs are separate tokens.
  void lex_number() {
    while (is_digit(at(i_))) ++i_;
    if (at(i_) == '.') {
      ++i_;
      while (is_digit(at(i_))) ++i_;
    }
    if (at(i_) == 'e' || at(i_) == 'E') {
      size_t j = i_ + 1;
      if (at(j) == '+' || at(j) == '-') ++j;
      if (is_digit(at(j))) {
        i_ = j;
        while (is_digit(at(i_))) ++i_;
      }
    }
  }

  std::string lex_string(char quote_char) {
    const size_t start = i_++;
    std::string value;
    for (;;) {
      if (i_ >= src_.size())
        schema_fail(src_, "unterminated string literal starting at column ", start + 1);
      const char c = src_[i_++];
      if (c == quote_char) return value;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (i_ >= src_.size())
        schema_fail(src_, "unterminated string literal starting at column ", start + 1);
      const char e = src_[i_++];
      switch (e) {
        case '\\': case '"': case '\'': value += e; break;
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        default:
          schema_fail(src_, "unknown escape '\\", e, "' in string literal at column ", i_ - 1,
                      " (known: \\\\ \\\" \\' \\n \\t)");
      }
    }
  }

  const std::string& src_;
  size_t i_ = 0;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text), lex_(text) { advance(); }

  Schema parse() {
    Schema s;
    if (cur_.kind != Token::Ident) expected("an op name");
    s.name = cur_.text;
    advance();
    if (is_punct(':') || is_punct('.'))
      schema_fail(text_, "the op name may not contain '::' or '.' (found ", found(), " at column ", col(),
                  "); the namespace is given separately and overload names are not supported");
    if (!accept('(')) expected("'(' after the op name");
    parse_params(s);
    if (cur_.kind != Token::Arrow) expected("'->' after the argument list");
    advance();
    parse_returns(s);
    if (cur_.kind != Token::End) expected("end of schema after the return type");
    s.text = to_string(s);
    return s;
  }

 private:
  void advance() { cur_ = lex_.next(); }
  bool is_punct(char c) const { return cur_.kind == Token::Punct && cur_.punct == c; }
  bool is_ident(const char* word) const { return cur_.kind == Token::Ident && cur_.text == word; }
  bool accept(char c) {
    if (!is_punct(c)) return false;
    advance();
    return true;
  }
  size_t col() const { return cur_.pos + 1; }

  // The current token as written, with unprintable bytes escaped.
  std::string found() const {
    if (cur_.kind == Token::End) return "end of schema";
    std::string out = "'";
    for (size_t i = cur_.pos; i < cur_.end; ++i) {
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      static const char hex[] = "0123456789abcdef";
      if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
      else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    return out + "'";
  }

  [[noreturn]] void expected(const std::string& what) const {
    schema_fail(text_, "expected ", what, " at column ", col(), " (found ", found(), ")");
  }

  // `Tensor(a!)` is PyTorch's way to declare that an op writes to or returns
  // a view of an input; gpuext has no alias analysis to honour it.
  void reject_alias() const {
    if (is_punct('('))
      schema_fail(text_, "alias annotations such as 'Tensor(a!)' are not supported (found '(' at column ",
                  col(), ")");
  }

  SchemaType parse_type(const char* what) {
    static const struct { const char* name; ArgType type; } kBases[] = {
        {"Tensor", ArgType::Tensor}, {"int", ArgType::Int},  {"float", ArgType::Float},
        {"bool", ArgType::Bool},     {"str", ArgType::Str}, {"ScalarType", ArgType::ScalarType},
        {"Handle", ArgType::Handle}, {"Device", ArgType::Device}};
    if (cur_.kind != Token::Ident) expected(what);
    const std::string base = cur_.text;
    const size_t base_col = col();
    SchemaType t{};
    bool known = false;
    for (const auto& b : kBases) {
      if (base == b.name) {
        t.type = b.type;
        known = true;
      }
    }
    if (!known)
      schema_fail(text_, "unknown type '", base, "' at column ", base_col,
                  " (expected Tensor, Tensor?, Tensor[], int, int?, int[], int[]?, float, float?, bool, "
                  "bool?, str, str?, ScalarType, ScalarType?, Handle, Handle?, Device or Device?)");
    advance();
    reject_alias();
    if (accept('[')) {
      if (!accept(']')) expected("']' (fixed-size lists such as 'int[2]' are not supported)");
      if (t.type == ArgType::Tensor) t.type = ArgType::TensorList;
      else if (t.type == ArgType::Int) t.type = ArgType::IntList;
      else
        schema_fail(text_, "lists of ", base, " are not supported at column ", base_col,
                    " (only int[] and Tensor[])");
    }
    if (is_punct('?')) {
      if (t.type == ArgType::TensorList)
        schema_fail(text_, "optional tensor lists ('Tensor[]?') are not supported at column ", col());
      t.optional = true;
      advance();
      if (is_punct('['))
        schema_fail(text_, "lists of optional values ('", base, "?[]') are not supported at column ", col());
    }
    reject_alias();
    return t;
  }

  void parse_params(Schema& s) {
    if (accept(')')) return;
    bool kwarg_only = false;
    std::unordered_set<std::string> names;
    std::string last_default;  // the last positional argument with a default; "" if none yet
    for (;;) {
      if (is_punct('*')) {
        if (kwarg_only)
          schema_fail(text_, "'*' may appear only once (found a second one at column ", col(), ")");
        kwarg_only = true;
        advance();
        if (is_punct(')'))
          schema_fail(text_, "'*' must be followed by keyword-only arguments (found ')' at column ", col(),
                      ")");
        if (!accept(',')) expected("',' after '*'");
        continue;
      }
      Argument a;
      a.kwarg_only = kwarg_only;
      a.type = parse_type("a type name");
      if (cur_.kind != Token::Ident) expected("an argument name");
      a.name = cur_.text;
      if (!names.insert(a.name).second)
        schema_fail(text_, "duplicate argument name '", a.name, "' at column ", col());
      advance();
      if (accept('=')) a.default_value = parse_default(a);
      // Positional arguments bind left to right, so a required one after an
      // optional one could never be reached by position alone.
      if (!kwarg_only) {
        if (a.default_value) {
          last_default = a.name;
        } else if (!last_default.empty()) {
          schema_fail(text_, "argument '", a.name, "' has no default but follows '", last_default,
                      "' which has one");
        }
      }
      s.args.push_back(std::move(a));
      if (accept(',')) continue;
      if (accept(')')) return;
      expected(str("',' or ')' after argument '", s.args.back().name, "'"));
    }
  }

  SchemaType parse_return_type() {
    const size_t c = col();
    SchemaType t = parse_type("a return type");
    if (t.optional && t.type != ArgType::Tensor)
      schema_fail(text_, "return type '", type_to_string(t), "' at column ", c,
                  " is not supported (only Tensor? may be optional in a return)");
    return t;
  }

  void parse_returns(Schema& s) {
    if (!accept('(')) {
      s.returns.push_back(Return{"", parse_return_type()});
      return;
    }
    if (accept(')')) return;  // "-> ()": nothing, not an empty tuple
    s.returns_tuple = true;
    std::unordered_set<std::string> names;
    for (;;) {
      Return r;
      r.type = parse_return_type();
      if (cur_.kind == Token::Ident) {
        r.name = cur_.text;
        if (!names.insert(r.name).second)
          schema_fail(text_, "duplicate return name '", r.name, "' at column ", col());
        advance();
      }
      s.returns.push_back(std::move(r));
      if (accept(',')) continue;
      if (accept(')')) return;
      expected("',' or ')' in the return tuple");
    }
  }

  [[noreturn]] void bad_default(const Argument& a, const std::string& want) const {
    schema_fail(text_, "default for ", type_to_string(a.type), " argument '", a.name, "' must be ", want,
                a.type.optional ? " or None" : "", " at column ", col(), " (found ", found(), ")");
  }

  // An optional sign, written against what follows it ("-1", not "- 1").
  // Returns -1, +1, or 0 when there is none.
  int parse_sign() {
    if (!is_punct('-') && !is_punct('+')) return 0;
    const int sign = is_punct('-') ? -1 : 1;
    const size_t sign_end = cur_.end;
    advance();
    if (cur_.pos != sign_end) expected("a number right after the sign");
    return sign;
  }

  // [+-]digits; false (nothing consumed but a sign) when that is not what comes.
  bool parse_int(const Argument& a, int64_t& out) {
    const size_t start = cur_.pos;
    const int sign = parse_sign();
    if (cur_.kind != Token::Number || cur_.text.find_first_not_of("0123456789") != std::string::npos)
      return false;
    const std::string digits = (sign < 0 ? "-" : "") + cur_.text;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
      schema_fail(text_, "default ", digits, " for argument '", a.name, "' at column ", start + 1,
                  " is out of range for a 64-bit integer");
    advance();
    return true;
  }

  double parse_float(const Argument& a) {
    const size_t start = cur_.pos;
    const int sign = parse_sign();
    double v = 0;
    if (is_ident("inf")) {
      v = std::numeric_limits<double>::infinity();
    } else if (is_ident("nan")) {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (cur_.kind == Token::Number) {
      if (!parse_double(cur_.text, v))
        schema_fail(text_, "default ", cur_.text, " for argument '", a.name, "' at column ", start + 1,
                    " is out of range for a double");
    } else {
      bad_default(a, "a number (such as 1, 0.5, 1e-5, inf or nan)");
    }
    advance();
    return sign < 0 ? -v : v;
  }

  DefaultValue parse_default(const Argument& a) {
    DefaultValue d;
    if (is_ident("None")) {
      if (!a.type.optional) {
        const std::string type = type_to_string(a.type);
        const std::string hint = a.type.type == ArgType::TensorList
                                     ? " (Tensor[] has no optional form)"
                                     : str(" (declare it '", type, "? ", a.name, "=None')");
        schema_fail(text_, "argument '", a.name, "' of type ", type, " cannot default to None at column ",
                    col(), hint);
      }
      advance();
      d.kind = GX_VALUE_NONE;
      return d;
    }
    switch (a.type.type) {
      case ArgType::Tensor:
        if (a.type.optional)
          schema_fail(text_, "default for Tensor? argument '", a.name, "' must be None at column ", col(),
                      " (found ", found(), ")");
        schema_fail(text_, "argument '", a.name, "' of type Tensor cannot have a default (only 'Tensor? ",
                    a.name, "=None' can)");
      case ArgType::TensorList:
        schema_fail(text_, "argument '", a.name, "' of type Tensor[] cannot have a default");
      case ArgType::Handle:
      case ArgType::Device:
        // NOTE [ Handles and devices in schemas ]: None is the only default.
        schema_fail(text_, "argument '", a.name, "' of type ", type_to_string(a.type),
                    " cannot have a default other than None (declare it '", type_to_string(SchemaType{a.type.type, true}),
                    " ", a.name, "=None')");
      case ArgType::Int:
        d.kind = GX_VALUE_INT;
        if (!parse_int(a, d.i)) bad_default(a, "an integer literal");
        return d;
      case ArgType::Float:
        d.kind = GX_VALUE_FLOAT;
        d.f = parse_float(a);
        return d;
      case ArgType::Bool:
        d.kind = GX_VALUE_BOOL;
        if (is_ident("True") || is_ident("true")) d.b = true;
        else if (is_ident("False") || is_ident("false")) d.b = false;
        else bad_default(a, "True or False");
        advance();
        return d;
      case ArgType::Str:
        d.kind = GX_VALUE_STR;
        if (cur_.kind != Token::String) bad_default(a, "a quoted string");
        d.s = cur_.text;
        advance();
        return d;
      case ArgType::IntList:
        d.kind = GX_VALUE_INT_LIST;
        if (accept('[')) {
          if (accept(']')) return d;
          for (;;) {
            int64_t v = 0;
            if (!parse_int(a, v)) expected(str("an integer in the default list for '", a.name, "'"));
            d.ints.push_back(v);
            if (accept(',')) continue;
            if (accept(']')) return d;
            expected(str("',' or ']' in the default list for '", a.name, "'"));
          }
        }
        // A lone int means a one-element list, as in PyTorch ("int[] s=1").
        d.ints.resize(1);
        if (!parse_int(a, d.ints[0])) bad_default(a, "a list of integers such as [0, 1], or one integer");
        return d;
      case ArgType::ScalarType:
        d.kind = GX_VALUE_DTYPE;
        if (cur_.kind == Token::Ident) {
          for (int i = 0; i < kNumDTypes; ++i) {
            if (cur_.text == dtype_name(static_cast<DType>(i))) {
              d.dtype = i;
              advance();
              return d;
            }
          }
        }
        bad_default(a, "a dtype name (" + dtype_names() + ")");
    }
    GX_CORE_INTERNAL_ASSERT(false, "unhandled ArgType in parse_default");
  }

  const std::string& text_;
  Lexer lex_;
  Token cur_;
};

std::string render_default(const DefaultValue& d) {
  switch (d.kind) {
    case GX_VALUE_NONE: return "None";
    case GX_VALUE_INT: return std::to_string(d.i);
    case GX_VALUE_FLOAT: return render_float(d.f);
    case GX_VALUE_BOOL: return d.b ? "True" : "False";
    case GX_VALUE_STR: return quote(d.s);
    case GX_VALUE_INT_LIST: {
      std::string out = "[";
      for (size_t i = 0; i < d.ints.size(); ++i) out += str(i ? ", " : "", d.ints[i]);
      return out + "]";
    }
    case GX_VALUE_DTYPE: return dtype_name(static_cast<DType>(d.dtype));
    default: return str("<value kind ", static_cast<int>(d.kind), ">");
  }
}

}  // namespace

std::string type_to_string(const SchemaType& t) {
  const char* base = "?";
  switch (t.type) {
    case ArgType::Tensor: base = "Tensor"; break;
    case ArgType::TensorList: base = "Tensor[]"; break;
    case ArgType::Int: base = "int"; break;
    case ArgType::Float: base = "float"; break;
    case ArgType::Bool: base = "bool"; break;
    case ArgType::Str: base = "str"; break;
    case ArgType::IntList: base = "int[]"; break;
    case ArgType::ScalarType: base = "ScalarType"; break;
    case ArgType::Handle: base = "Handle"; break;
    case ArgType::Device: base = "Device"; break;
  }
  return t.optional ? std::string(base) + "?" : std::string(base);
}

std::string to_string(const Schema& s) {
  std::string out = s.name + "(";
  bool star = false;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Argument& a = s.args[i];
    if (i) out += ", ";
    if (a.kwarg_only && !star) {
      out += "*, ";
      star = true;
    }
    out += type_to_string(a.type) + " " + a.name;
    if (a.default_value) out += "=" + render_default(*a.default_value);
  }
  out += ") -> ";
  if (s.returns.size() == 1 && !s.returns_tuple) return out + type_to_string(s.returns[0].type);
  out += "(";
  for (size_t i = 0; i < s.returns.size(); ++i) {
    if (i) out += ", ";
    out += type_to_string(s.returns[i].type);
    if (!s.returns[i].name.empty()) out += " " + s.returns[i].name;
  }
  return out + ")";
}

Schema parse_schema(const std::string& text) { return Parser(text).parse(); }

}  // namespace gx::core
