// Jinja tests: `x is defined`, `x is none`, `x is equalto y`, ... (jinja2/tests.py).
#include <string>

#include "chat/builtins.h"
#include "chat/call_args.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

const Value& Other(std::string_view test, CallArgs& args) {
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    ThrowTypeError(std::string(test) + "() takes exactly one argument");
  }
  return args.positional[0];
}

void NoArgs(std::string_view test, CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty()) {
    ThrowTypeError(std::string(test) + "() takes no arguments");
  }
}

#define RADIXLM_SIMPLE_TEST(fn, name, expr)            \
  bool fn(Renderer&, const Value& v, CallArgs& args) { \
    NoArgs(name, args);                                \
    return (expr);                                     \
  }

RADIXLM_SIMPLE_TEST(Defined, "defined", !v.is_undefined())
RADIXLM_SIMPLE_TEST(Undefined, "undefined", v.is_undefined())
RADIXLM_SIMPLE_TEST(None, "none", v.is_none())
RADIXLM_SIMPLE_TEST(Boolean, "boolean", v.is_bool())
RADIXLM_SIMPLE_TEST(False, "false", v.is_bool() && !v.as_bool())
RADIXLM_SIMPLE_TEST(True, "true", v.is_bool() && v.as_bool())
RADIXLM_SIMPLE_TEST(Integer, "integer", v.is_int())
RADIXLM_SIMPLE_TEST(Float, "float", v.is_float())
RADIXLM_SIMPLE_TEST(Number, "number", v.is_number())
RADIXLM_SIMPLE_TEST(String, "string", v.is_string())
RADIXLM_SIMPLE_TEST(Mapping, "mapping", v.is_dict())
RADIXLM_SIMPLE_TEST(Iterable, "iterable",
                    v.is_list() || v.is_dict() || v.is_string() || v.is_undefined())
RADIXLM_SIMPLE_TEST(Sequence, "sequence",
                    v.is_list() || v.is_dict() || v.is_string() || v.is_undefined())
RADIXLM_SIMPLE_TEST(Callable, "callable", v.is_callable())
RADIXLM_SIMPLE_TEST(Escaped, "escaped", false)

#undef RADIXLM_SIMPLE_TEST

#define RADIXLM_COMPARE_TEST(fn, name, op)                     \
  bool fn(Renderer&, const Value& v, CallArgs& args) {         \
    return CompareValues(CompareOp::op, v, Other(name, args)); \
  }

RADIXLM_COMPARE_TEST(EqualTo, "equalto", kEq)
RADIXLM_COMPARE_TEST(NotEqual, "ne", kNe)
RADIXLM_COMPARE_TEST(LessThan, "lessthan", kLt)
RADIXLM_COMPARE_TEST(LessEqual, "le", kLe)
RADIXLM_COMPARE_TEST(GreaterThan, "greaterthan", kGt)
RADIXLM_COMPARE_TEST(GreaterEqual, "ge", kGe)
RADIXLM_COMPARE_TEST(In, "in", kIn)

#undef RADIXLM_COMPARE_TEST

int64_t IntegerOf(std::string_view test, const Value& v) {
  if (!v.is_integral()) {
    ThrowTypeError(std::string(test) + " test needs an integer, not " + v.TypeName());
  }
  return v.ToInt();
}

bool Odd(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("odd", args);
  return IntegerOf("odd", v) % 2 != 0;
}

bool Even(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("even", args);
  return IntegerOf("even", v) % 2 == 0;
}

bool DivisibleBy(Renderer&, const Value& v, CallArgs& args) {
  const int64_t divisor = IntegerOf("divisibleby", Other("divisibleby", args));
  if (divisor == 0) ThrowTypeError("integer division or modulo by zero");
  return IntegerOf("divisibleby", v) % divisor == 0;
}

// Python str.islower() / isupper(): some cased character, and all cased ones in that case.
bool CaseTest(const Value& v, bool want_lower) {
  const std::string s = v.Str();
  bool any_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = NextCodePoint(s, &pos);
    std::string upper;
    AppendUpper(cp, &upper);
    std::string self;
    AppendUtf8(cp, &self);
    const bool is_lower = upper != self;
    const bool is_upper = ToLower(cp) != cp;
    if (!is_lower && !is_upper) continue;
    any_cased = true;
    if (want_lower ? is_upper : is_lower) return false;
  }
  return any_cased;
}

bool Lower(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("lower", args);
  return CaseTest(v, true);
}

bool Upper(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("upper", args);
  return CaseTest(v, false);
}

bool SameAs(Renderer&, const Value& v, CallArgs& args) {
  const Value& other = Other("sameas", args);
  if (v.kind() != other.kind()) return false;
  if (v.is_none() || v.is_undefined()) return true;
  if (v.is_bool()) return v.as_bool() == other.as_bool();
  if (v.is_int()) return v.as_int() == other.as_int();  // CPython caches small ints
  return v.Identity() != nullptr && v.Identity() == other.Identity();
}

bool IsFilter(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("filter", args);
  return v.is_string() &&
         (FindFilter(v.as_string()) != nullptr || FindSequenceFilter(v.as_string()) != nullptr);
}

bool IsTest(Renderer&, const Value& v, CallArgs& args) {
  NoArgs("test", args);
  return v.is_string() && FindTest(v.as_string()) != nullptr;
}

struct NamedTest {
  std::string_view name;
  TestFn fn;
};

constexpr NamedTest kTests[] = {
    {"defined", Defined},
    {"undefined", Undefined},
    {"none", None},
    {"boolean", Boolean},
    {"false", False},
    {"true", True},
    {"integer", Integer},
    {"float", Float},
    {"number", Number},
    {"string", String},
    {"mapping", Mapping},
    {"iterable", Iterable},
    {"sequence", Sequence},
    {"callable", Callable},
    {"escaped", Escaped},
    {"equalto", EqualTo},
    {"eq", EqualTo},
    {"==", EqualTo},
    {"ne", NotEqual},
    {"!=", NotEqual},
    {"lessthan", LessThan},
    {"lt", LessThan},
    {"<", LessThan},
    {"le", LessEqual},
    {"<=", LessEqual},
    {"greaterthan", GreaterThan},
    {"gt", GreaterThan},
    {">", GreaterThan},
    {"ge", GreaterEqual},
    {">=", GreaterEqual},
    {"in", In},
    {"odd", Odd},
    {"even", Even},
    {"divisibleby", DivisibleBy},
    {"lower", Lower},
    {"upper", Upper},
    {"sameas", SameAs},
    {"filter", IsFilter},
    {"test", IsTest},
};

}  // namespace

TestFn FindTest(std::string_view name) {
  for (const NamedTest& test : kTests) {
    if (test.name == name) return test.fn;
  }
  return nullptr;
}

}  // namespace radixlm::chat
