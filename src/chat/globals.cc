// Global functions: jinja2's range / namespace / dict, and the two transformers adds for chat
// templates: raise_exception(message) and strftime_now(format).
#include <ctime>
#include <memory>
#include <string>

#include "chat/builtins.h"
#include "chat/call_args.h"
#include "chat/template_error.h"

namespace radixlm::chat {

namespace {

// jinja2's sandbox refuses ranges longer than this (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

Value Range(Renderer&, CallArgs& args) {
  if (!args.keyword.empty()) ThrowTypeError("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) ThrowTypeError("range expected 1 to 3 arguments");
  for (const Value& v : p) {
    if (!v.is_integral()) {
      ThrowTypeError("'" + v.TypeName() + "' object cannot be interpreted as an integer");
    }
  }
  const int64_t start = p.size() == 1 ? 0 : p[0].ToInt();
  const int64_t stop = p.size() == 1 ? p[0].ToInt() : p[1].ToInt();
  const int64_t step = p.size() == 3 ? p[2].ToInt() : 1;
  if (step == 0) ThrowTypeError("range() arg 3 must not be zero");
  const long double span = (static_cast<long double>(stop) - start) / step;
  if (span > kMaxRange) {
    ThrowTypeError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                   std::to_string(kMaxRange) + ").");
  }
  Value::List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(Value::Int(i));
  return Value::MakeList(std::move(out));
}

// dict(mapping_or_pairs, **kwargs) -> entries, as Python's dict() builds them.
DictData BuildDict(Renderer& r, const CallArgs& args, const char* name) {
  if (args.positional.size() > 1) {
    ThrowTypeError(std::string(name) + " expected at most 1 positional argument");
  }
  DictData dict;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      dict = source.as_dict();
    } else {
      for (const Value& pair : r.Iterate(source)) {
        const std::vector<Value> kv = r.Iterate(pair);
        if (kv.size() != 2) ThrowTypeError("dictionary update sequence element has wrong length");
        dict.Set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [key, value] : args.keyword) dict.Set(Value::String(key), value);
  return dict;
}

Value Dict(Renderer& r, CallArgs& args) { return Value::MakeDict(BuildDict(r, args, "dict")); }

Value Namespace(Renderer& r, CallArgs& args) {
  auto ns = std::make_shared<NamespaceData>();
  const DictData attrs = BuildDict(r, args, "namespace");
  for (const auto& [key, value] : attrs.entries()) ns->Set(key.Str(), value);
  r.TrackNamespace(ns);
  return Value::Namespace(std::move(ns));
}

Value RaiseException(Renderer&, CallArgs& args) {
  BoundArgs a("raise_exception", args, {"message"});
  throw TemplateError(ErrorKind::kRaised, a.Has(0) ? a.Get(0)->Str() : "");
}

Value StrftimeNow(Renderer& r, CallArgs& args) {
  BoundArgs a("strftime_now", args, {"format"});
  const std::string format = a.StringOr(0, "");
  std::tm local{};
  if (r.limits().fixed_now_unix_s.has_value()) {
    const std::time_t fixed = static_cast<std::time_t>(*r.limits().fixed_now_unix_s);
    gmtime_r(&fixed, &local);
  } else {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &local);
  }
  std::string out(256 + format.size() * 8, '\0');
  const size_t n =
      format.empty() ? 0 : std::strftime(out.data(), out.size(), format.c_str(), &local);
  out.resize(n);
  return Value::String(std::move(out));
}

}  // namespace

void InstallGlobals(Frame* globals) {
  globals->Set("range", Value::Function("range", Range));
  globals->Set("dict", Value::Function("dict", Dict));
  globals->Set("namespace", Value::Function("namespace", Namespace));
  globals->Set("raise_exception", Value::Function("raise_exception", RaiseException));
  globals->Set("strftime_now", Value::Function("strftime_now", StrftimeNow));
}

}  // namespace radixlm::chat
