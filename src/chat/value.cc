#include "chat/value.h"

#include <algorithm>

#include "chat/template_error.h"

namespace radixlm::chat {

Value Value::Undefined(std::string hint) {
  return Value(UndefinedTag{std::make_shared<const std::string>(std::move(hint))});
}

Value Value::String(std::string s) {
  return Value(std::make_shared<const std::string>(std::move(s)));
}

namespace {

uint16_t NestingOf(int deepest_child) {
  if (deepest_child + 1 > Value::kMaxNesting) {
    throw TemplateError(ErrorKind::kLimit, "lists/dicts nested more than " +
                                               std::to_string(Value::kMaxNesting) + " deep");
  }
  return static_cast<uint16_t>(deepest_child + 1);
}

}  // namespace

Value Value::MakeList(List items) {
  int deepest = 0;
  for (const Value& item : items) deepest = std::max(deepest, item.nesting());
  Value v(std::make_shared<const List>(std::move(items)));
  v.nesting_ = NestingOf(deepest);
  return v;
}

Value Value::MakeTuple(List items) {
  Value v = MakeList(std::move(items));
  v.is_tuple_ = true;
  return v;
}

Value Value::MakeDict(DictData dict) {
  int deepest = 0;
  for (const auto& [key, value] : dict.entries()) {
    deepest = std::max({deepest, key.nesting(), value.nesting()});
  }
  Value v(std::make_shared<const DictData>(std::move(dict)));
  v.nesting_ = NestingOf(deepest);
  return v;
}

Value Value::Function(std::string name, NativeFunction fn) {
  return Value(std::make_shared<const CallableData>(CallableData{std::move(name), std::move(fn)}));
}

Value Value::Namespace(std::shared_ptr<NamespaceData> ns) { return Value(std::move(ns)); }

const std::string& Value::undefined_hint() const {
  static const std::string kEmpty;
  const auto& tag = std::get<UndefinedTag>(storage_);
  return tag.hint ? *tag.hint : kEmpty;
}

double Value::ToDouble() const {
  if (is_float()) return as_float();
  return static_cast<double>(ToInt());
}

bool Value::Truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return as_int() != 0;
    case Kind::kFloat:
      return as_float() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
      return !as_list().empty();
    case Kind::kDict:
      return !as_dict().empty();
    case Kind::kCallable:
    case Kind::kNamespace:
      return true;
  }
  return false;
}

std::string Value::TypeName() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return is_tuple() ? "tuple" : "list";
    case Kind::kDict:
      return "dict";
    case Kind::kCallable:
      return "function";
    case Kind::kNamespace:
      return "Namespace";
  }
  return "object";
}

const void* Value::Identity() const {
  switch (kind()) {
    case Kind::kString:
      return std::get<StringPtr>(storage_).get();
    case Kind::kList:
      return std::get<ListPtr>(storage_).get();
    case Kind::kDict:
      return std::get<DictPtr>(storage_).get();
    case Kind::kCallable:
      return std::get<CallablePtr>(storage_).get();
    case Kind::kNamespace:
      return std::get<NamespacePtr>(storage_).get();
    default:
      return nullptr;
  }
}

bool PyEquals(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.ToDouble() == b.ToDouble();
    return a.ToInt() == b.ToInt();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kList: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!PyEquals(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const DictData& x = a.as_dict();
      const DictData& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.Find(key);
        if (other == nullptr || !PyEquals(value, *other)) return false;
      }
      return true;
    }
    default:
      return a.Identity() == b.Identity();
  }
}

const Value* DictData::Find(const Value& key) const {
  if (key.is_string()) return FindString(key.as_string());
  for (const auto& entry : entries_) {
    if (PyEquals(entry.first, key)) return &entry.second;
  }
  return nullptr;
}

const Value* DictData::FindString(std::string_view key) const {
  for (const auto& entry : entries_) {
    if (entry.first.is_string() && entry.first.as_string() == key) return &entry.second;
  }
  return nullptr;
}

void DictData::Set(Value key, Value value) {
  for (auto& entry : entries_) {
    if (PyEquals(entry.first, key)) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

const Value* NamespaceData::Find(std::string_view name) const {
  for (const auto& attr : attrs) {
    if (attr.first == name) return &attr.second;
  }
  return nullptr;
}

void NamespaceData::Set(const std::string& name, Value value) {
  for (auto& attr : attrs) {
    if (attr.first == name) {
      attr.second = std::move(value);
      return;
    }
  }
  attrs.emplace_back(name, std::move(value));
}

}  // namespace radixlm::chat
