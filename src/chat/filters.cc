// String and scalar filters (jinja2/filters.py), with transformers' tojson override.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "chat/builtins.h"
#include "chat/call_args.h"
#include "chat/json_value.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

void CheckBuiltSize(size_t bytes) {
  if (bytes > kMaxBuiltBytes) {
    throw TemplateError(ErrorKind::kLimit, "a string or list grew beyond " +
                                               std::to_string(kMaxBuiltBytes) + " bytes");
  }
}

namespace {

Value Str(const Value& v) { return Value::String(v.Str()); }

Value Trim(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("trim", args, {"chars"});
  return Value::String(PyStrip(input.Str(), a.OptionalString(0), true, true));
}

Value Upper(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("upper", args, {});
  return Value::String(PyUpper(input.Str()));
}

Value Lower(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("lower", args, {});
  return Value::String(PyLower(input.Str()));
}

Value Capitalize(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("capitalize", args, {});
  const std::string s = input.Str();
  std::string out;
  size_t pos = 0;
  if (pos < s.size()) AppendUpper(NextCodePoint(s, &pos), &out);
  out += PyLower(std::string_view(s).substr(pos));
  return Value::String(std::move(out));
}

// jinja2's title: words start after runs of [-\s({\[<].
Value Title(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("title", args, {});
  const std::string s = input.Str();
  std::string out;
  bool word_start = true;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = NextCodePoint(s, &pos);
    const bool separator =
        IsPySpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    if (separator) {
      AppendUtf8(cp, &out);
      word_start = true;
    } else if (word_start) {
      AppendUpper(cp, &out);
      word_start = false;
    } else {
      AppendUtf8(ToLower(cp), &out);
    }
  }
  return Value::String(std::move(out));
}

Value ToString(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("string", args, {});
  return Str(input);
}

Value Safe(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("safe", args, {});
  return Str(input);
}

Value Escape(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("escape", args, {});
  std::string out;
  for (char c : input.Str()) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return Value::String(std::move(out));
}

Value Replace(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("replace", args, {"old", "new", "count"});
  const std::string s = input.Str();
  const std::string from = a.Required(0).Str();
  const std::string to = a.Required(1).Str();
  const int64_t count = a.IntOr(2, -1);
  const size_t hits = from.empty() ? CodePointCount(s) + 1 : s.size() / from.size() + 1;
  CheckBuiltSize(s.size() + to.size() * hits);
  return Value::String(PyReplace(s, from, to, count));
}

// Python float() of a string: digits with optional '_' separators, or inf/nan words.
bool ParsePyFloat(const std::string& text, double* out) {
  std::string s = PyStrip(text, nullptr, true, true);
  std::string lower = PyLower(s);
  size_t sign = (!lower.empty() && (lower[0] == '+' || lower[0] == '-')) ? 1 : 0;
  const std::string word = lower.substr(sign);
  if (word == "inf" || word == "infinity" || word == "nan") {
    *out = word == "nan" ? NAN : INFINITY;
    if (lower[0] == '-') *out = -*out;
    return true;
  }
  std::string cleaned;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return false;
      }
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' &&
        c != '+' && c != '-') {
      return false;
    }
    cleaned.push_back(c);
  }
  if (cleaned.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(cleaned.c_str(), &end);
  return end == cleaned.c_str() + cleaned.size();
}

// Python int(str, base) for base 2..36.
bool ParsePyInt(const std::string& text, int64_t base, int64_t* out) {
  std::string s = PyStrip(text, nullptr, true, true);
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (base == 16 && s.compare(i, 2, "0x") == 0) i += 2;
  if (base == 8 && s.compare(i, 2, "0o") == 0) i += 2;
  if (base == 2 && s.compare(i, 2, "0b") == 0) i += 2;
  if (i >= s.size()) return false;
  int64_t value = 0;
  bool prev_digit = false;
  for (; i < s.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    if (c == '_' && prev_digit && i + 1 < s.size()) {
      prev_digit = false;
      continue;
    }
    const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                  : (c >= 'a' && c <= 'z')                    ? c - 'a' + 10
                                                              : 99;
    if (d >= base) return false;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value)) {
      return false;
    }
    prev_digit = true;
  }
  if (!prev_digit) return false;
  *out = negative ? -value : value;
  return true;
}

Value ToInt(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("int", args, {"default", "base"});
  const Value fallback = a.Has(0) ? *a.Get(0) : Value::Int(0);
  const int64_t base = a.IntOr(1, 10);
  if (input.is_integral()) return Value::Int(input.ToInt());
  if (input.is_float()) {
    const double f = input.as_float();
    if (!std::isfinite(f) || std::fabs(f) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(std::trunc(f)));
  }
  if (input.is_string()) {
    int64_t i = 0;
    if (base >= 2 && base <= 36 && ParsePyInt(input.as_string(), base, &i)) return Value::Int(i);
    double f = 0;
    if (ParsePyFloat(input.as_string(), &f) && std::isfinite(f) && std::fabs(f) < 9.2e18) {
      return Value::Int(static_cast<int64_t>(std::trunc(f)));
    }
  }
  return fallback;
}

Value ToFloat(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("float", args, {"default"});
  if (input.is_number()) return Value::Float(input.ToDouble());
  double f = 0;
  if (input.is_string() && ParsePyFloat(input.as_string(), &f)) return Value::Float(f);
  return a.Has(0) ? *a.Get(0) : Value::Float(0.0);
}

Value Abs(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("abs", args, {});
  if (input.is_float()) return Value::Float(std::fabs(input.as_float()));
  if (input.is_integral()) return UnaryOperation(input.ToInt() < 0, input);
  ThrowTypeError("bad operand type for abs(): '" + input.TypeName() + "'");
}

Value Round(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("round", args, {"precision", "method"});
  const int64_t precision = a.IntOr(0, 0);
  const std::string method = a.StringOr(1, "common");
  if (method != "common" && method != "ceil" && method != "floor") {
    ThrowTypeError("method must be common, ceil or floor");
  }
  if (!input.is_number()) ThrowTypeError("type " + input.TypeName() + " doesn't define __round__");
  const double x = input.ToDouble();
  if (method == "common") {
    if (input.is_integral() && precision >= 0) return Value::Int(input.ToInt());
    if (!std::isfinite(x)) return Value::Float(x);
    if (precision >= 0 && precision < 300) {  // printf rounds the exact binary value half-even
      char buf[400];
      std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
      return Value::Float(std::strtod(buf, nullptr));
    }
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return Value::Float(std::nearbyint(x / scale) * scale);
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double r = method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale);
  return Value::Float(r / scale);
}

Value Default(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("default", args, {"default_value", "boolean"});
  if (input.is_undefined() || (a.BoolOr(1, false) && !input.Truthy())) {
    return a.Has(0) ? *a.Get(0) : Value::String("");
  }
  return input;
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent, separators, sort_keys).
Value ToJson(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensure_ascii = a.BoolOr(0, false);
  if (const Value* indent = a.Get(1); indent != nullptr && !indent->is_none()) {
    if (indent->is_string()) {
      options.indent = indent->as_string();
    } else if (indent->is_integral()) {
      options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent->ToInt())), ' ');
    } else {
      ThrowTypeError("tojson() indent must be an int or a string");
    }
    options.item_separator.assign(1, ',');
  }
  if (const Value* sep = a.Get(2); sep != nullptr && !sep->is_none()) {
    if (!sep->is_list() || sep->as_list().size() != 2 || !sep->as_list()[0].is_string() ||
        !sep->as_list()[1].is_string()) {
      ThrowTypeError("tojson() separators must be a pair of strings");
    }
    options.item_separator = sep->as_list()[0].as_string();
    options.key_separator = sep->as_list()[1].as_string();
  }
  options.sort_keys = a.BoolOr(3, false);
  return Value::String(DumpJson(input, options));
}

Value Indent(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("indent", args, {"width", "first", "blank"});
  std::string indentation;
  if (a.Has(0) && a.Get(0)->is_string()) {
    indentation = a.Get(0)->as_string();
  } else {
    indentation.assign(static_cast<size_t>(std::max<int64_t>(0, a.IntOr(0, 4))), ' ');
  }
  const bool first = a.BoolOr(1, false);
  const bool blank = a.BoolOr(2, false);
  const std::vector<std::string> lines = PySplitLines(input.Str() + "\n");
  CheckBuiltSize(input.Str().size() + indentation.size() * (lines.size() + 1));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += "\n";
      if (blank || !lines[i].empty()) out += indentation;
    }
    out += lines[i];
  }
  if (first) out = indentation + out;
  return Value::String(std::move(out));
}

Value Center(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("center", args, {"width"});
  const std::string s = input.Str();
  const int64_t width = a.IntOr(0, 80);
  const int64_t length = static_cast<int64_t>(CodePointCount(s));
  if (width <= length) return Value::String(s);
  CheckBuiltSize(static_cast<size_t>(width));
  const int64_t margin = width - length;
  const int64_t left = margin / 2 + (margin & width & 1);
  return Value::String(std::string(static_cast<size_t>(left), ' ') + s +
                       std::string(static_cast<size_t>(margin - left), ' '));
}

Value Format(Renderer&, const Value& input, CallArgs& args) {
  if (!args.keyword.empty()) ThrowTypeError("format() keyword arguments are not supported");
  const Value packed = Value::MakeTuple(args.positional);
  return Value::String(PercentFormat(input.Str(), packed));
}

struct NamedFilter {
  std::string_view name;
  FilterFn fn;
};

constexpr NamedFilter kFilters[] = {
    {"trim", Trim},       {"upper", Upper},
    {"lower", Lower},     {"capitalize", Capitalize},
    {"title", Title},     {"string", ToString},
    {"safe", Safe},       {"escape", Escape},
    {"e", Escape},        {"forceescape", Escape},
    {"replace", Replace}, {"int", ToInt},
    {"float", ToFloat},   {"abs", Abs},
    {"round", Round},     {"default", Default},
    {"d", Default},       {"tojson", ToJson},
    {"indent", Indent},   {"center", Center},
    {"format", Format},
};

}  // namespace

FilterFn FindFilter(std::string_view name) {
  for (const NamedFilter& filter : kFilters) {
    if (filter.name == name) return filter.fn;
  }
  return nullptr;
}

}  // namespace radixlm::chat
