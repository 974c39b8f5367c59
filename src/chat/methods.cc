// Python methods reachable from templates: str.strip(), str.split(), dict.items(), ... as the
// immutable sandbox allows them (mutating list/dict methods raise a security error).
#include <algorithm>
#include <cctype>
#include <string>

#include "chat/builtins.h"
#include "chat/call_args.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

using Method = Value (*)(Renderer&, const Value& self, CallArgs& args);

// Code-point index of byte offset `byte` in s.
int64_t CodePointIndex(const std::string& s, size_t byte) {
  return static_cast<int64_t>(CodePointCount(std::string_view(s).substr(0, byte)));
}

// s[start:end] by code points, with Python's clamping of optional bounds.
std::string CodePointSlice(const std::string& s, const BoundArgs& a, size_t start_index) {
  if (!a.Has(start_index) && !a.Has(start_index + 1)) return s;
  const std::vector<size_t> offsets = CodePointOffsets(s);
  const int64_t n = static_cast<int64_t>(offsets.size() - 1);
  auto clamp = [n](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
  const int64_t start = clamp(a.IntOr(start_index, 0));
  const int64_t end = std::max(start, clamp(a.IntOr(start_index + 1, n)));
  return s.substr(offsets[start], offsets[end] - offsets[start]);
}

Value Strip(const Value& self, CallArgs& args, const char* name, bool left, bool right) {
  BoundArgs a(name, args, {"chars"});
  return Value::String(PyStrip(self.as_string(), a.OptionalString(0), left, right));
}
Value StrStrip(Renderer&, const Value& s, CallArgs& args) { return Strip(s, args, "strip", 1, 1); }
Value StrLStrip(Renderer&, const Value& s, CallArgs& args) {
  return Strip(s, args, "lstrip", 1, 0);
}
Value StrRStrip(Renderer&, const Value& s, CallArgs& args) {
  return Strip(s, args, "rstrip", 0, 1);
}

Value SplitImpl(const Value& self, CallArgs& args, bool from_right) {
  BoundArgs a(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"});
  const std::string* sep = a.OptionalString(0);
  if (sep != nullptr && sep->empty()) ThrowTypeError("empty separator");
  const int64_t maxsplit = a.IntOr(1, -1);
  const std::vector<std::string> parts = from_right ? PyRSplit(self.as_string(), sep, maxsplit)
                                                    : PySplit(self.as_string(), sep, maxsplit);
  Value::List out;
  out.reserve(parts.size());
  for (const std::string& part : parts) out.push_back(Value::String(part));
  return Value::MakeList(std::move(out));
}
Value StrSplit(Renderer&, const Value& s, CallArgs& args) { return SplitImpl(s, args, false); }
Value StrRSplit(Renderer&, const Value& s, CallArgs& args) { return SplitImpl(s, args, true); }

Value StrSplitLines(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("splitlines", args, {});
  Value::List out;
  for (std::string& line : PySplitLines(self.as_string())) out.push_back(Value::String(line));
  return Value::MakeList(std::move(out));
}

Value AffixTest(const Value& self, CallArgs& args, bool prefix) {
  BoundArgs a(prefix ? "startswith" : "endswith", args, {"affix", "start", "end"});
  const std::string s = CodePointSlice(self.as_string(), a, 1);
  const Value& affix = a.Required(0);
  std::vector<Value> candidates = affix.is_list() ? affix.as_list() : std::vector<Value>{affix};
  for (const Value& c : candidates) {
    if (!c.is_string()) {
      ThrowTypeError(std::string(prefix ? "startswith" : "endswith") +
                     " first arg must be str or a tuple of str, not " + c.TypeName());
    }
    const std::string& t = c.as_string();
    if (t.size() > s.size()) continue;
    if (prefix ? s.compare(0, t.size(), t) == 0
               : s.compare(s.size() - t.size(), t.size(), t) == 0) {
      return Value::Bool(true);
    }
  }
  return Value::Bool(false);
}
Value StrStartsWith(Renderer&, const Value& s, CallArgs& args) { return AffixTest(s, args, true); }
Value StrEndsWith(Renderer&, const Value& s, CallArgs& args) { return AffixTest(s, args, false); }

Value StrUpper(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("upper", args, {});
  return Value::String(PyUpper(self.as_string()));
}

Value StrLower(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("lower", args, {});
  return Value::String(PyLower(self.as_string()));
}

// Python str.title(): a letter after a non-letter starts a word.
Value StrTitle(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("title", args, {});
  const std::string& s = self.as_string();
  std::string out;
  bool previous_cased = false;
  for (size_t pos = 0; pos < s.size();) {
    const char32_t cp = NextCodePoint(s, &pos);
    std::string upper;
    AppendUpper(cp, &upper);
    std::string self_text;
    AppendUtf8(cp, &self_text);
    const bool cased = upper != self_text || ToLower(cp) != cp;
    if (!cased) {
      out += self_text;
    } else if (previous_cased) {
      AppendUtf8(ToLower(cp), &out);
    } else {
      out += upper;
    }
    previous_cased = cased;
  }
  return Value::String(std::move(out));
}

Value StrCapitalize(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("capitalize", args, {});
  const std::string& s = self.as_string();
  std::string out;
  size_t pos = 0;
  if (pos < s.size()) AppendUpper(NextCodePoint(s, &pos), &out);
  out += PyLower(std::string_view(s).substr(pos));
  return Value::String(std::move(out));
}

Value StrReplace(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("replace", args, {"old", "new", "count"});
  if (!a.Required(0).is_string() || !a.Required(1).is_string()) {
    ThrowTypeError("replace() arguments must be str");
  }
  const std::string& from = a.Required(0).as_string();
  const std::string& to = a.Required(1).as_string();
  const std::string& s = self.as_string();
  const size_t hits = from.empty() ? CodePointCount(s) + 1 : s.size() / from.size() + 1;
  CheckBuiltSize(s.size() + to.size() * hits);
  return Value::String(PyReplace(s, from, to, a.IntOr(2, -1)));
}

Value FindImpl(const Value& self, CallArgs& args, bool from_right) {
  BoundArgs a(from_right ? "rfind" : "find", args, {"sub", "start", "end"});
  if (!a.Required(0).is_string()) ThrowTypeError("must be str, not " + a.Required(0).TypeName());
  const std::string& sub = a.Required(0).as_string();
  const std::string& s = self.as_string();
  const int64_t n = static_cast<int64_t>(CodePointCount(s));
  int64_t start = a.IntOr(1, 0);
  if (start < 0) start = std::max<int64_t>(0, start + n);
  const std::string window = CodePointSlice(s, a, 1);
  const size_t hit = from_right ? window.rfind(sub) : window.find(sub);
  if (hit == std::string::npos || start > n) return Value::Int(-1);
  return Value::Int(start + CodePointIndex(window, hit));
}
Value StrFind(Renderer&, const Value& s, CallArgs& args) { return FindImpl(s, args, false); }
Value StrRFind(Renderer&, const Value& s, CallArgs& args) { return FindImpl(s, args, true); }

Value StrCount(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("count", args, {"sub"});
  const std::string sub = a.StringOr(0, "");
  const std::string& s = self.as_string();
  if (sub.empty()) return Value::Int(static_cast<int64_t>(CodePointCount(s)) + 1);
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  return Value::Int(n);
}

Value StrJoin(Renderer& r, const Value& self, CallArgs& args) {
  BoundArgs a("join", args, {"iterable"});
  std::string out;
  bool first = true;
  for (const Value& item : r.Iterate(a.Required(0))) {
    if (!item.is_string())
      ThrowTypeError("sequence item: expected str instance, " + item.TypeName() + " found");
    if (!first) out += self.as_string();
    first = false;
    out += item.as_string();
    CheckBuiltSize(out.size());
  }
  return Value::String(std::move(out));
}

// str.format: {} / {0} / {name} fields with optional !s / !r; format specs are not supported.
Value StrFormat(Renderer&, const Value& self, CallArgs& args) {
  const std::string& f = self.as_string();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '}') {
      if (i + 1 < f.size() && f[i + 1] == '}')
        ++i;
      else
        ThrowTypeError("Single '}' encountered in format string");
      out.push_back('}');
      continue;
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const size_t close = f.find('}', i);
    if (close == std::string::npos) ThrowTypeError("Single '{' encountered in format string");
    std::string field = f.substr(i + 1, close - i - 1);
    i = close;
    char conversion = 's';
    if (const size_t bang = field.find('!'); bang != std::string::npos) {
      conversion = bang + 1 < field.size() ? field[bang + 1] : 's';
      field.resize(bang);
    }
    if (field.find(':') != std::string::npos) {
      ThrowTypeError("str.format() format specifications are not supported");
    }
    const Value* arg = nullptr;
    if (field.empty() ||
        std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const size_t index = field.empty() ? auto_index++ : std::stoul(field);
      if (index >= args.positional.size()) {
        ThrowTypeError("Replacement index " + std::to_string(index) + " out of range");
      }
      arg = &args.positional[index];
    } else {
      for (const auto& [key, value] : args.keyword) {
        if (key == field) arg = &value;
      }
      if (arg == nullptr) ThrowTypeError("KeyError: '" + field + "'");
    }
    out += conversion == 'r' ? arg->Repr() : arg->Str();
    CheckBuiltSize(out.size());
  }
  return Value::String(std::move(out));
}

template <bool (*Pred)(char32_t)>
Value CharClass(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("is*", args, {});
  const std::string& s = self.as_string();
  if (s.empty()) return Value::Bool(false);
  for (size_t pos = 0; pos < s.size();) {
    if (!Pred(NextCodePoint(s, &pos))) return Value::Bool(false);
  }
  return Value::Bool(true);
}
bool IsDigitCp(char32_t c) { return c >= '0' && c <= '9'; }
bool IsAlphaCp(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= 0xC0 && !IsPySpace(c) && IsPyPrintable(c));
}
bool IsAlnumCp(char32_t c) { return IsDigitCp(c) || IsAlphaCp(c); }

Value StrRemoveAffix(const Value& self, CallArgs& args, bool prefix) {
  BoundArgs a(prefix ? "removeprefix" : "removesuffix", args, {"affix"});
  const std::string affix = a.StringOr(0, "");
  const std::string& s = self.as_string();
  if (affix.size() <= s.size()) {
    if (prefix && s.compare(0, affix.size(), affix) == 0)
      return Value::String(s.substr(affix.size()));
    if (!prefix && s.compare(s.size() - affix.size(), affix.size(), affix) == 0) {
      return Value::String(s.substr(0, s.size() - affix.size()));
    }
  }
  return self;
}
Value StrRemovePrefix(Renderer&, const Value& s, CallArgs& a) { return StrRemoveAffix(s, a, true); }
Value StrRemoveSuffix(Renderer&, const Value& s, CallArgs& a) {
  return StrRemoveAffix(s, a, false);
}

Value DictItems(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("items", args, {});
  Value::List pairs;
  for (const auto& [key, value] : self.as_dict().entries()) {
    pairs.push_back(Value::MakeTuple({key, value}));
  }
  return Value::MakeList(std::move(pairs));
}

Value DictKeys(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("keys", args, {});
  Value::List keys;
  for (const auto& entry : self.as_dict().entries()) keys.push_back(entry.first);
  return Value::MakeList(std::move(keys));
}

Value DictValues(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("values", args, {});
  Value::List values;
  for (const auto& entry : self.as_dict().entries()) values.push_back(entry.second);
  return Value::MakeList(std::move(values));
}

Value DictGet(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("get", args, {"key", "default"});
  const Value* v = self.as_dict().Find(a.Required(0));
  if (v != nullptr) return *v;
  return a.Has(1) ? *a.Get(1) : Value::None();
}

Value DictCopy(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("copy", args, {});
  return self;
}

Value ListCount(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("count", args, {"value"});
  const Value& needle = a.Required(0);
  return Value::Int(std::count_if(self.as_list().begin(), self.as_list().end(),
                                  [&](const Value& v) { return PyEquals(v, needle); }));
}

Value ListIndex(Renderer&, const Value& self, CallArgs& args) {
  BoundArgs a("index", args, {"value"});
  const Value& needle = a.Required(0);
  const auto& items = self.as_list();
  for (size_t i = 0; i < items.size(); ++i) {
    if (PyEquals(items[i], needle)) return Value::Int(static_cast<int64_t>(i));
  }
  ThrowTypeError(needle.Repr() + " is not in list");
}

struct NamedMethod {
  std::string_view name;
  Method fn;
};

constexpr NamedMethod kStringMethods[] = {
    {"strip", StrStrip},
    {"lstrip", StrLStrip},
    {"rstrip", StrRStrip},
    {"split", StrSplit},
    {"rsplit", StrRSplit},
    {"splitlines", StrSplitLines},
    {"startswith", StrStartsWith},
    {"endswith", StrEndsWith},
    {"upper", StrUpper},
    {"lower", StrLower},
    {"title", StrTitle},
    {"capitalize", StrCapitalize},
    {"replace", StrReplace},
    {"find", StrFind},
    {"rfind", StrRFind},
    {"count", StrCount},
    {"join", StrJoin},
    {"isdigit", CharClass<IsDigitCp>},
    {"isalpha", CharClass<IsAlphaCp>},
    {"isalnum", CharClass<IsAlnumCp>},
    {"isspace", CharClass<IsPySpace>},
    {"removeprefix", StrRemovePrefix},
    {"removesuffix", StrRemoveSuffix},
    {"format", StrFormat},
};

constexpr NamedMethod kDictMethods[] = {
    {"items", DictItems}, {"keys", DictKeys}, {"values", DictValues},
    {"get", DictGet},     {"copy", DictCopy},
};

constexpr NamedMethod kListMethods[] = {{"count", ListCount}, {"index", ListIndex}};

constexpr std::string_view kUnsafeDictMethods[] = {"pop", "popitem", "update", "clear",
                                                   "setdefault"};
constexpr std::string_view kUnsafeListMethods[] = {"append", "extend",  "insert", "pop",
                                                   "remove", "reverse", "sort",   "clear"};

template <size_t N>
Method Lookup(const NamedMethod (&table)[N], std::string_view name) {
  for (const NamedMethod& m : table) {
    if (m.name == name) return m.fn;
  }
  return nullptr;
}

template <size_t N>
bool IsUnsafe(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names) ||
         name.substr(0, 2) == "__";
}

}  // namespace

bool FindMethod(const Value& receiver, std::string_view name, Value* out) {
  Method method = nullptr;
  bool unsafe = false;
  const char* type = receiver.is_string() ? "str" : receiver.is_dict() ? "dict" : "list";
  if (receiver.is_string()) {
    unsafe = name.substr(0, 2) == "__";
    method = Lookup(kStringMethods, name);
  } else if (receiver.is_dict()) {
    unsafe = IsUnsafe(kUnsafeDictMethods, name);
    method = Lookup(kDictMethods, name);
  } else if (receiver.is_list()) {
    unsafe = IsUnsafe(kUnsafeListMethods, name);
    method = Lookup(kListMethods, name);
  }
  if (unsafe) {
    // jinja2's unsafe_undefined: prints as "", is not defined, fails when called.
    *out = Value::Undefined("access to attribute '" + std::string(name) + "' of '" + type +
                            "' object is unsafe.");
    return true;
  }
  if (method == nullptr) return false;
  *out = Value::Function(std::string(name), [method, receiver](Renderer& r, CallArgs& args) {
    return method(r, receiver, args);
  });
  return true;
}

}  // namespace radixlm::chat
