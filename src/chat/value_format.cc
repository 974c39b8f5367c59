// Python str()/repr() of template values.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/template_error.h"
#include "chat/text.h"
#include "chat/value.h"

namespace radixlm::chat {

namespace {

// Namespaces may contain themselves; lists/dicts are bounded by Value::kMaxNesting.
constexpr int kMaxFormatDepth = Value::kMaxNesting + 64;

void AppendHex(uint32_t value, int digits, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out->push_back(kHex[(value >> shift) & 0xF]);
}

void AppendFormatted(const Value& v, bool repr, int depth, std::string* out);

void AppendSequence(const Value& v, int depth, std::string* out) {
  if (v.is_list()) {
    out->push_back(v.is_tuple() ? '(' : '[');
    bool first = true;
    for (const Value& item : v.as_list()) {
      if (!first) out->append(", ");
      first = false;
      AppendFormatted(item, /*repr=*/true, depth + 1, out);
    }
    if (v.is_tuple() && v.as_list().size() == 1) out->push_back(',');
    out->push_back(v.is_tuple() ? ')' : ']');
    return;
  }
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : v.as_dict().entries()) {
    if (!first) out->append(", ");
    first = false;
    AppendFormatted(key, /*repr=*/true, depth + 1, out);
    out->append(": ");
    AppendFormatted(value, /*repr=*/true, depth + 1, out);
  }
  out->push_back('}');
}

void AppendFormatted(const Value& v, bool repr, int depth, std::string* out) {
  if (depth > kMaxFormatDepth) {
    throw TemplateError(ErrorKind::kLimit, "value nested too deeply to print");
  }
  using Kind = Value::Kind;
  switch (v.kind()) {
    case Kind::kUndefined:
      if (repr) out->append("Undefined");
      return;
    case Kind::kNone:
      out->append("None");
      return;
    case Kind::kBool:
      out->append(v.as_bool() ? "True" : "False");
      return;
    case Kind::kInt:
      out->append(std::to_string(v.as_int()));
      return;
    case Kind::kFloat:
      out->append(FormatPyFloat(v.as_float()));
      return;
    case Kind::kString:
      if (repr) {
        out->append(PyStringRepr(v.as_string()));
      } else {
        out->append(v.as_string());
      }
      return;
    case Kind::kList:
    case Kind::kDict:
      AppendSequence(v, depth, out);
      return;
    case Kind::kCallable:
      out->append("<function " + v.as_callable().name + ">");
      return;
    case Kind::kNamespace: {
      out->append("<Namespace {");
      bool first = true;
      for (const auto& [name, value] : v.as_namespace().attrs) {
        if (!first) out->append(", ");
        first = false;
        out->append(PyStringRepr(name));
        out->append(": ");
        AppendFormatted(value, /*repr=*/true, depth + 1, out);
      }
      out->append("}>");
      return;
    }
  }
}

}  // namespace

std::string Value::Str() const {
  if (is_string()) return as_string();
  std::string out;
  AppendFormatted(*this, /*repr=*/false, 0, &out);
  return out;
}

std::string Value::Repr() const {
  std::string out;
  AppendFormatted(*this, /*repr=*/true, 0, &out);
  return out;
}

std::string FormatPyFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as CPython's repr, then CPython's layout rules.
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, result.ptr);  // "-d.ddde+XX"
  std::string out;
  size_t pos = 0;
  if (sci[0] == '-') {
    out.push_back('-');
    pos = 1;
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  const int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out.append("0.");
      out.append(static_cast<size_t>(-decpt), '0');
      out.append(digits);
    } else if (decpt >= ndigits) {
      out.append(digits);
      out.append(static_cast<size_t>(decpt - ndigits), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, static_cast<size_t>(decpt));
      out.push_back('.');
      out.append(digits, static_cast<size_t>(decpt), std::string::npos);
    }
    return out;
  }
  out.push_back(digits[0]);
  if (ndigits > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out.append(exp_buf);
  return out;
}

std::string PyStringRepr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back(quote);
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const char32_t cp = NextCodePoint(s, &pos);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\t') {
      out.append("\\t");
    } else if (cp == '\n') {
      out.append("\\n");
    } else if (cp == '\r') {
      out.append("\\r");
    } else if (cp < 0x20 || cp == 0x7F) {
      out.append("\\x");
      AppendHex(cp, 2, &out);
    } else if (cp < 0x7F) {
      out.push_back(static_cast<char>(cp));
    } else if (pos - start == 1) {
      // A byte that is not valid UTF-8: Python would never hold it; show it escaped.
      out.append("\\x");
      AppendHex(cp, 2, &out);
    } else if (IsPyPrintable(cp)) {
      out.append(s.substr(start, pos - start));
    } else if (cp <= 0xFF) {
      out.append("\\x");
      AppendHex(cp, 2, &out);
    } else if (cp <= 0xFFFF) {
      out.append("\\u");
      AppendHex(cp, 4, &out);
    } else {
      out.append("\\U");
      AppendHex(cp, 8, &out);
    }
  }
  out.push_back(quote);
  return out;
}

}  // namespace radixlm::chat
