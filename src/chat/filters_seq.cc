// Sequence and mapping filters: length, first/last, join, list, items, sort, dictsort, unique,
// reverse, select/reject(attr), map, sum, min/max, attr.
#include <algorithm>
#include <string>

#include "chat/builtins.h"
#include "chat/call_args.h"
#include "chat/operators.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value GetPath(Renderer& r, const Value& item, const Value& attribute) {
  if (attribute.is_integral()) return r.GetItem(item, attribute);
  static const std::string kDot = ".";
  Value current = item;
  for (const std::string& part : PySplit(attribute.Str(), &kDot, -1)) {
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
    current = r.GetItem(current, numeric ? Value::Int(std::stoll(part)) : Value::String(part));
  }
  return current;
}

// Sort key preprocessing: lowercases strings unless case-sensitive (jinja2's ignore_case).
Value SortKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(PyLower(v.as_string()));
  return v;
}

bool Less(const Value& a, const Value& b) { return CompareValues(CompareOp::kLt, a, b); }

Value Length(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("length", args, {});
  switch (input.kind()) {
    case Value::Kind::kUndefined:
      return Value::Int(0);
    case Value::Kind::kString:
      return Value::Int(static_cast<int64_t>(CodePointCount(input.as_string())));
    case Value::Kind::kList:
      return Value::Int(static_cast<int64_t>(input.as_list().size()));
    case Value::Kind::kDict:
      return Value::Int(static_cast<int64_t>(input.as_dict().size()));
    default:
      ThrowTypeError("object of type '" + input.TypeName() + "' has no len()");
  }
}

Value First(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("first", args, {});
  std::vector<Value> items = r.Iterate(input);
  if (items.empty()) return Value::Undefined("No first item, sequence was empty.");
  return items.front();
}

Value Last(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("last", args, {});
  std::vector<Value> items = r.Iterate(input);
  if (items.empty()) return Value::Undefined("No last item, sequence was empty.");
  return items.back();
}

Value Join(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("join", args, {"d", "attribute"});
  const std::string separator = a.Has(0) ? a.Get(0)->Str() : "";
  std::string out;
  bool first = true;
  for (const Value& item : r.Iterate(input)) {
    if (!first) out += separator;
    first = false;
    out += (a.Has(1) ? GetPath(r, item, *a.Get(1)) : item).Str();
    CheckBuiltSize(out.size());
  }
  return Value::String(std::move(out));
}

Value ToList(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("list", args, {});
  return Value::MakeList(r.Iterate(input));
}

Value Items(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("items", args, {});
  if (input.is_undefined()) return Value::MakeList({});
  if (!input.is_dict()) ThrowTypeError("Can only get item pairs from a mapping.");
  Value::List pairs;
  for (const auto& [key, value] : input.as_dict().entries()) {
    pairs.push_back(Value::MakeTuple({key, value}));
  }
  return Value::MakeList(std::move(pairs));
}

Value DictSort(Renderer&, const Value& input, CallArgs& args) {
  BoundArgs a("dictsort", args, {"case_sensitive", "by", "reverse"});
  if (!input.is_dict()) ThrowTypeError("dictsort() needs a mapping");
  const bool case_sensitive = a.BoolOr(0, false);
  const std::string by = a.StringOr(1, "key");
  if (by != "key" && by != "value")
    ThrowTypeError("You can only sort by either \"key\" or \"value\"");
  const size_t pos = by == "key" ? 0 : 1;
  std::vector<Value> pairs;
  for (const auto& [key, value] : input.as_dict().entries()) {
    pairs.push_back(Value::MakeTuple({key, value}));
  }
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return Less(SortKey(x.as_list()[pos], case_sensitive),
                SortKey(y.as_list()[pos], case_sensitive));
  });
  if (a.BoolOr(2, false)) std::reverse(pairs.begin(), pairs.end());
  return Value::MakeList(std::move(pairs));
}

Value Sort(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("sort", args, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = a.BoolOr(0, false);
  const bool case_sensitive = a.BoolOr(1, false);
  std::vector<Value> items = r.Iterate(input);
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& item : items) {
    Value key = a.Has(2) ? GetPath(r, item, *a.Get(2)) : item;
    keyed.emplace_back(SortKey(key, case_sensitive), std::move(item));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? Less(y.first, x.first) : Less(x.first, y.first);
  });
  Value::List out;
  for (auto& entry : keyed) out.push_back(std::move(entry.second));
  return Value::MakeList(std::move(out));
}

Value Unique(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("unique", args, {"case_sensitive", "attribute"});
  const bool case_sensitive = a.BoolOr(0, false);
  Value::List out;
  std::vector<Value> seen;
  for (const Value& item : r.Iterate(input)) {
    Value key = SortKey(a.Has(1) ? GetPath(r, item, *a.Get(1)) : item, case_sensitive);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return PyEquals(s, key); })) {
      continue;
    }
    seen.push_back(std::move(key));
    out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

Value Reverse(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("reverse", args, {});
  if (input.is_string()) {
    std::vector<char32_t> cps = DecodeUtf8(input.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value::String(EncodeUtf8(cps));
  }
  std::vector<Value> items = r.Iterate(input);
  std::reverse(items.begin(), items.end());
  return Value::MakeList(std::move(items));
}

// select / reject / selectattr / rejectattr share this: keep items whose (attribute) value
// passes the named test (or is truthy when no test is named), or fails it when rejecting.
Value SelectOrReject(Renderer& r, const Value& input, CallArgs& args, bool by_attribute,
                     bool select) {
  std::vector<Value> rest = args.positional;
  Value attribute;
  if (by_attribute) {
    if (rest.empty()) ThrowTypeError("selectattr/rejectattr need an attribute name");
    attribute = rest.front();
    rest.erase(rest.begin());
  }
  std::string test_name;
  if (!rest.empty()) {
    test_name = rest.front().Str();
    rest.erase(rest.begin());
  }
  Value::List out;
  for (const Value& item : r.Iterate(input)) {
    const Value subject = by_attribute ? GetPath(r, item, attribute) : item;
    bool passed;
    if (test_name.empty()) {
      passed = subject.Truthy();
    } else {
      CallArgs test_args{rest, args.keyword};
      passed = r.ApplyTest(test_name, subject, test_args);
    }
    if (passed == select) out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

Value Select(Renderer& r, const Value& in, CallArgs& args) {
  return SelectOrReject(r, in, args, false, true);
}
Value Reject(Renderer& r, const Value& in, CallArgs& args) {
  return SelectOrReject(r, in, args, false, false);
}
Value SelectAttr(Renderer& r, const Value& in, CallArgs& args) {
  return SelectOrReject(r, in, args, true, true);
}
Value RejectAttr(Renderer& r, const Value& in, CallArgs& args) {
  return SelectOrReject(r, in, args, true, false);
}

// map(attribute='x', default=d) or map('filter', args...).
Value Map(Renderer& r, const Value& input, CallArgs& args) {
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [key, value] : args.keyword) {
    if (key == "attribute") attribute = &value;
    if (key == "default") fallback = &value;
  }
  Value::List out;
  if (attribute != nullptr) {
    for (const Value& item : r.Iterate(input)) {
      Value v = GetPath(r, item, *attribute);
      out.push_back(v.is_undefined() && fallback != nullptr ? *fallback : v);
    }
    return Value::MakeList(std::move(out));
  }
  if (args.positional.empty()) ThrowTypeError("map requires a filter argument");
  const std::string filter = args.positional[0].Str();
  CallArgs filter_args{std::vector<Value>(args.positional.begin() + 1, args.positional.end()),
                       args.keyword};
  for (const Value& item : r.Iterate(input)) {
    CallArgs call = filter_args;
    out.push_back(r.ApplyFilter(filter, item, call));
  }
  return Value::MakeList(std::move(out));
}

Value Sum(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("sum", args, {"attribute", "start"});
  Value total = a.Has(1) ? *a.Get(1) : Value::Int(0);
  for (const Value& item : r.Iterate(input)) {
    total = BinaryOperation(BinaryOp::kAdd, total, a.Has(0) ? GetPath(r, item, *a.Get(0)) : item);
  }
  return total;
}

Value MinMax(Renderer& r, const Value& input, CallArgs& args, bool want_max) {
  BoundArgs a(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  const bool case_sensitive = a.BoolOr(0, false);
  const std::vector<Value> items = r.Iterate(input);
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  const Value* best = &items[0];
  Value best_key = SortKey(a.Has(1) ? GetPath(r, *best, *a.Get(1)) : *best, case_sensitive);
  for (const Value& item : items) {
    Value key = SortKey(a.Has(1) ? GetPath(r, item, *a.Get(1)) : item, case_sensitive);
    if (want_max ? Less(best_key, key) : Less(key, best_key)) {
      best = &item;
      best_key = std::move(key);
    }
  }
  return *best;
}

Value Min(Renderer& r, const Value& in, CallArgs& args) { return MinMax(r, in, args, false); }
Value Max(Renderer& r, const Value& in, CallArgs& args) { return MinMax(r, in, args, true); }

Value Attr(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("attr", args, {"name"});
  const std::string name = a.Required(0).Str();
  Value method;  // getattr() only: unlike `.name`, no fallback to dict items
  if (FindMethod(input, name, &method)) return method;
  if (input.is_namespace()) {
    if (const Value* v = input.as_namespace().Find(name)) return *v;
  }
  return Value::Undefined("'" + input.TypeName() + " object' has no attribute '" + name + "'");
}

struct NamedFilter {
  std::string_view name;
  FilterFn fn;
};

constexpr NamedFilter kSequenceFilters[] = {
    {"length", Length},
    {"count", Length},
    {"first", First},
    {"last", Last},
    {"join", Join},
    {"list", ToList},
    {"items", Items},
    {"dictsort", DictSort},
    {"sort", Sort},
    {"unique", Unique},
    {"reverse", Reverse},
    {"select", Select},
    {"reject", Reject},
    {"selectattr", SelectAttr},
    {"rejectattr", RejectAttr},
    {"map", Map},
    {"sum", Sum},
    {"min", Min},
    {"max", Max},
    {"attr", Attr},
};

}  // namespace

FilterFn FindSequenceFilter(std::string_view name) {
  for (const NamedFilter& filter : kSequenceFilters) {
    if (filter.name == name) return filter.fn;
  }
  return nullptr;
}

}  // namespace radixlm::chat
