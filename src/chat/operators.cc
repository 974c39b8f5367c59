#include "chat/operators.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "chat/builtins.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

const char* OpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kFloorDiv:
      return "//";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kPow:
      return "**";
  }
  return "?";
}

[[noreturn]] void Unsupported(const char* symbol, const Value& a, const Value& b) {
  ThrowTypeError(std::string("unsupported operand type(s) for ") + symbol + ": '" + a.TypeName() +
                 "' and '" + b.TypeName() + "'");
}

[[noreturn]] void Overflow() { ThrowTypeError("integer result too large (beyond 64 bits)"); }

Value Repeat(const Value& sequence, int64_t times) {
  if (times <= 0) {
    return sequence.is_string() ? Value::String("") : Value::MakeList({});
  }
  if (sequence.is_string()) {
    const std::string& s = sequence.as_string();
    CheckBuiltSize(s.size() * static_cast<size_t>(std::min<int64_t>(times, kMaxBuiltBytes + 1)));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value::String(std::move(out));
  }
  const Value::List& items = sequence.as_list();
  CheckBuiltSize(items.size() * sizeof(Value) *
                 static_cast<size_t>(std::min<int64_t>(times, kMaxBuiltBytes + 1)));
  Value::List out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::MakeList(std::move(out));
}

Value IntPow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) {
      if (__builtin_mul_overflow(result, base, &result)) Overflow();
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) Overflow();
  }
  return Value::Int(result);
}

Value Arithmetic(BinaryOp op, const Value& a, const Value& b) {
  const bool use_float = a.is_float() || b.is_float();
  if (!use_float) {
    const int64_t x = a.ToInt();
    const int64_t y = b.ToInt();
    int64_t r = 0;
    switch (op) {
      case BinaryOp::kAdd:
        if (__builtin_add_overflow(x, y, &r)) Overflow();
        return Value::Int(r);
      case BinaryOp::kSub:
        if (__builtin_sub_overflow(x, y, &r)) Overflow();
        return Value::Int(r);
      case BinaryOp::kMul:
        if (__builtin_mul_overflow(x, y, &r)) Overflow();
        return Value::Int(r);
      case BinaryOp::kDiv:
        if (y == 0) ThrowTypeError("division by zero");
        return Value::Float(static_cast<double>(x) / static_cast<double>(y));
      case BinaryOp::kFloorDiv:
      case BinaryOp::kMod: {
        if (y == 0) ThrowTypeError("integer division or modulo by zero");
        if (x == std::numeric_limits<int64_t>::min() && y == -1) {
          if (op == BinaryOp::kMod) return Value::Int(0);
          Overflow();
        }
        int64_t q = x / y;
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          q -= 1;
          m += y;
        }
        return Value::Int(op == BinaryOp::kFloorDiv ? q : m);
      }
      case BinaryOp::kPow:
        if (y >= 0) return IntPow(x, y);
        if (x == 0) ThrowTypeError("0.0 cannot be raised to a negative power");
        return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
  }
  const double x = a.ToDouble();
  const double y = b.ToDouble();
  switch (op) {
    case BinaryOp::kAdd:
      return Value::Float(x + y);
    case BinaryOp::kSub:
      return Value::Float(x - y);
    case BinaryOp::kMul:
      return Value::Float(x * y);
    case BinaryOp::kDiv:
      if (y == 0.0) ThrowTypeError("float division by zero");
      return Value::Float(x / y);
    case BinaryOp::kFloorDiv:
    case BinaryOp::kMod: {
      if (y == 0.0) {
        ThrowTypeError(op == BinaryOp::kMod ? "float modulo" : "float floor division by zero");
      }
      double m = std::fmod(x, y);
      double q = (x - m) / y;
      if (m != 0.0) {
        if ((y < 0) != (m < 0)) {
          m += y;
          q -= 1.0;
        }
      } else {
        m = std::copysign(0.0, y);
      }
      if (op == BinaryOp::kMod) return Value::Float(m);
      double floor_q = std::floor(q);
      if (q - floor_q > 0.5) floor_q += 1.0;
      if (q == 0.0) floor_q = std::copysign(0.0, x / y);
      return Value::Float(floor_q);
    }
    case BinaryOp::kPow:
      if (x == 0.0 && y < 0) ThrowTypeError("0.0 cannot be raised to a negative power");
      if (x < 0 && std::floor(y) != y) {
        ThrowTypeError("negative number raised to a fractional power (complex result)");
      }
      return Value::Float(std::pow(x, y));
  }
  return Value();
}

}  // namespace

Value BinaryOperation(BinaryOp op, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    throw TemplateError(ErrorKind::kUndefined, u.undefined_hint());
  }
  if (a.is_number() && b.is_number()) return Arithmetic(op, a, b);
  const char* symbol = OpSymbol(op);
  switch (op) {
    case BinaryOp::kAdd:
      if (a.is_string() && b.is_string()) {
        CheckBuiltSize(a.as_string().size() + b.as_string().size());
        return Value::String(a.as_string() + b.as_string());
      }
      if (a.is_list() && b.is_list()) {
        Value::List out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return Value::MakeList(std::move(out));
      }
      if (a.is_string()) {
        ThrowTypeError("can only concatenate str (not \"" + b.TypeName() + "\") to str");
      }
      if (a.is_list()) {
        ThrowTypeError("can only concatenate list (not \"" + b.TypeName() + "\") to list");
      }
      Unsupported(symbol, a, b);
    case BinaryOp::kMul:
      if ((a.is_string() || a.is_list()) && b.is_integral()) return Repeat(a, b.ToInt());
      if ((b.is_string() || b.is_list()) && a.is_integral()) return Repeat(b, a.ToInt());
      if (a.is_string() || a.is_list() || b.is_string() || b.is_list()) {
        ThrowTypeError("can't multiply sequence by non-int of type '" +
                       (a.is_string() || a.is_list() ? b : a).TypeName() + "'");
      }
      Unsupported(symbol, a, b);
    case BinaryOp::kMod:
      if (a.is_string()) return Value::String(PercentFormat(a.as_string(), b));
      Unsupported(symbol, a, b);
    default:
      Unsupported(symbol, a, b);
  }
}

Value UnaryOperation(bool negate, const Value& operand) {
  if (operand.is_undefined()) {
    throw TemplateError(ErrorKind::kUndefined, operand.undefined_hint());
  }
  if (operand.is_float()) return Value::Float(negate ? -operand.as_float() : operand.as_float());
  if (operand.is_integral()) {
    const int64_t v = operand.ToInt();
    if (!negate) return Value::Int(v);
    if (v == std::numeric_limits<int64_t>::min()) Overflow();
    return Value::Int(-v);
  }
  ThrowTypeError(std::string("bad operand type for unary ") + (negate ? "-" : "+") + ": '" +
                 operand.TypeName() + "'");
}

namespace {

// Python's < for the types that support ordering; returns -1, 0 or 1.
int Order(const Value& a, const Value& b, const char* symbol) {
  if (a.is_undefined() || b.is_undefined()) {
    throw TemplateError(ErrorKind::kUndefined, (a.is_undefined() ? a : b).undefined_hint());
  }
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      return a.ToInt() < b.ToInt() ? -1 : a.ToInt() > b.ToInt() ? 1 : 0;
    }
    const double x = a.ToDouble();
    const double y = b.ToDouble();
    return x < y ? -1 : x > y ? 1 : 0;  // NaN compares "equal" here; only == is exact
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!PyEquals(x[i], y[i])) return Order(x[i], y[i], symbol);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  ThrowTypeError(std::string("'") + symbol + "' not supported between instances of '" +
                 a.TypeName() + "' and '" + b.TypeName() + "'");
}

}  // namespace

bool CompareValues(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::kEq:
      return PyEquals(a, b);
    case CompareOp::kNe:
      return !PyEquals(a, b);
    case CompareOp::kLt:
      return Order(a, b, "<") < 0;
    case CompareOp::kLe:
      return Order(a, b, "<=") <= 0;
    case CompareOp::kGt:
      return Order(a, b, ">") > 0;
    case CompareOp::kGe:
      return Order(a, b, ">=") >= 0;
    case CompareOp::kIn:
      return Contains(b, a);
    case CompareOp::kNotIn:
      return !Contains(b, a);
  }
  return false;
}

bool Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        ThrowTypeError("'in <string>' requires string as left operand, not " + item.TypeName());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.as_list()) {
        if (PyEquals(v, item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      return container.as_dict().Find(item) != nullptr;
    default:
      ThrowTypeError("argument of type '" + container.TypeName() + "' is not iterable");
  }
}

std::string PercentFormat(const std::string& format, const Value& args) {
  std::vector<Value> values;
  if (args.is_tuple()) {
    values = args.as_list();
  } else {
    values.push_back(args);
  }
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out.push_back(format[i]);
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < format.size() && std::string_view("-+ #0").find(format[j]) != std::string::npos) {
      spec.push_back(format[j++]);
    }
    while (j < format.size() &&
           (std::isdigit(static_cast<unsigned char>(format[j])) || format[j] == '.')) {
      spec.push_back(format[j++]);
    }
    if (j >= format.size()) ThrowTypeError("incomplete format");
    const char type = format[j];
    i = j;
    if (type == '%') {
      out.push_back('%');
      continue;
    }
    if (next >= values.size()) ThrowTypeError("not enough arguments for format string");
    const Value& v = values[next++];
    char buf[512];
    if (type == 's' || type == 'r') {
      std::string text = type == 's' ? v.Str() : v.Repr();
      const size_t dot = spec.find('.');
      size_t flags_end = 1;
      while (flags_end < spec.size() &&
             std::string_view("-+ #0").find(spec[flags_end]) != std::string_view::npos) {
        ++flags_end;
      }
      const size_t width = static_cast<size_t>(std::atoi(spec.c_str() + flags_end));
      if (dot != std::string::npos) {
        const std::vector<char32_t> cps = DecodeUtf8(text);
        const size_t precision = static_cast<size_t>(std::atoi(spec.c_str() + dot + 1));
        if (cps.size() > precision) {
          text = EncodeUtf8(std::vector<char32_t>(cps.begin(), cps.begin() + precision));
        }
      }
      const size_t length = CodePointCount(text);
      const std::string pad(width > length ? std::min<size_t>(width - length, kMaxBuiltBytes) : 0,
                            ' ');
      out += spec.find('-') != std::string::npos ? text + pad : pad + text;
    } else if (type == 'd' || type == 'i' || type == 'x' || type == 'o') {
      if (!v.is_number()) {
        ThrowTypeError(std::string("%") + type + " format: a real number is required, not " +
                       v.TypeName());
      }
      const long long n =
          v.is_float() ? static_cast<long long>(std::trunc(v.as_float())) : v.ToInt();
      std::snprintf(buf, sizeof(buf), (spec + "ll" + (type == 'i' ? 'd' : type)).c_str(), n);
      out += buf;
    } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' ||
               type == 'G') {
      if (!v.is_number()) {
        ThrowTypeError(std::string("must be real number, not ") + v.TypeName());
      }
      std::snprintf(buf, sizeof(buf), (spec + type).c_str(), v.ToDouble());
      out += buf;
    } else {
      ThrowTypeError(std::string("unsupported format character '") + type + "'");
    }
  }
  if (next < values.size()) ThrowTypeError("not all arguments converted during string formatting");
  CheckBuiltSize(out.size());
  return out;
}

}  // namespace radixlm::chat
