// Value: the dynamic type a template computes with, modelled on the Python objects jinja2 sees.
//
// Kinds: undefined (jinja2's Undefined, with a hint for error messages), none, bool, int (int64),
// float (double), string (UTF-8), list, dict (insertion-ordered, any key), callable (filters'
// helpers, bound methods, macros, globals) and namespace (the one mutable object, shared by
// reference, as in jinja2). Lists and dicts are immutable once built (the sandbox forbids
// mutation), so copies share storage and are cheap.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace radixlm::chat {

class Renderer;
class Value;
class DictData;
struct NamespaceData;

// Arguments of a call: f(a, b, key=c).
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using NativeFunction = std::function<Value(Renderer&, CallArgs&)>;

struct CallableData {
  std::string name;
  NativeFunction fn;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kCallable,
    kNamespace,
  };
  using List = std::vector<Value>;
  // Lists and dicts nest at most this deep (deeper would risk the stack in str(), ==, and
  // destruction); building a deeper one throws a kLimit TemplateError.
  static constexpr int kMaxNesting = 256;

  Value() = default;  // undefined
  static Value Undefined(std::string hint);
  static Value None() { return Value(NoneTag{}); }
  static Value Bool(bool b) { return Value(b); }
  static Value Int(int64_t i) { return Value(i); }
  static Value Float(double f) { return Value(f); }
  static Value String(std::string s);
  static Value MakeList(List items);
  // A Python tuple: a list that prints as (a, b) and never equals a list.
  static Value MakeTuple(List items);
  static Value MakeDict(DictData dict);
  static Value Function(std::string name, NativeFunction fn);
  static Value Namespace(std::shared_ptr<NamespaceData> ns);

  Kind kind() const { return static_cast<Kind>(storage_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }  // lists and tuples
  bool is_tuple() const { return is_tuple_; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_callable() const { return kind() == Kind::kCallable; }
  bool is_namespace() const { return kind() == Kind::kNamespace; }
  // bool, int or float (Python's numbers.Number: bool is an int).
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  // bool or int (usable as an index or a count).
  bool is_integral() const { return is_bool() || is_int(); }

  bool as_bool() const { return std::get<bool>(storage_); }
  int64_t as_int() const { return std::get<int64_t>(storage_); }
  double as_float() const { return std::get<double>(storage_); }
  const std::string& as_string() const { return *std::get<StringPtr>(storage_); }
  const List& as_list() const { return *std::get<ListPtr>(storage_); }
  const DictData& as_dict() const { return *std::get<DictPtr>(storage_); }
  const CallableData& as_callable() const { return *std::get<CallablePtr>(storage_); }
  NamespaceData& as_namespace() const { return *std::get<NamespacePtr>(storage_); }
  const std::string& undefined_hint() const;

  // Integral value of a bool or int; numeric value of a bool, int or float.
  int64_t ToInt() const { return is_bool() ? (as_bool() ? 1 : 0) : as_int(); }
  double ToDouble() const;

  // Python truthiness (undefined is false).
  bool Truthy() const;
  // Python str(): what {{ value }} prints. Undefined prints as "".
  std::string Str() const;
  // Python repr(), used inside str() of lists and dicts.
  std::string Repr() const;
  // Python type name for error messages: 'int', 'str', 'NoneType', ...
  std::string TypeName() const;
  // Identity of shared storage (namespaces and callables compare by identity).
  const void* Identity() const;
  // 0 for scalars, 1 + the deepest element for lists and dicts.
  int nesting() const { return nesting_; }

 private:
  struct UndefinedTag {
    std::shared_ptr<const std::string> hint;
  };
  struct NoneTag {};
  using StringPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const List>;
  using DictPtr = std::shared_ptr<const DictData>;
  using CallablePtr = std::shared_ptr<const CallableData>;
  using NamespacePtr = std::shared_ptr<NamespaceData>;
  using Storage = std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StringPtr, ListPtr,
                               DictPtr, CallablePtr, NamespacePtr>;

  template <typename T>
  explicit Value(T v) : storage_(std::move(v)) {}

  Storage storage_;
  uint16_t nesting_ = 0;
  bool is_tuple_ = false;
};

// An insertion-ordered mapping with Python key equality (1 == 1.0 == True).
class DictData {
 public:
  using Entry = std::pair<Value, Value>;

  const Value* Find(const Value& key) const;
  const Value* FindString(std::string_view key) const;
  // Inserts or replaces (keeping the original position, as Python does).
  void Set(Value key, Value value);
  void Reserve(size_t n) { entries_.reserve(n); }
  // Appends a key the caller knows is not present yet (JSON objects, built-in records).
  void Append(Value key, Value value) { entries_.emplace_back(std::move(key), std::move(value)); }
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;
};

// jinja2's namespace(): attributes assignable with {% set ns.attr = ... %}.
struct NamespaceData {
  std::vector<std::pair<std::string, Value>> attrs;

  const Value* Find(std::string_view name) const;
  void Set(const std::string& name, Value value);
};

// Python ==.
bool PyEquals(const Value& a, const Value& b);

// Python repr() of a float ("1.0", "1e+16", "inf", "nan").
std::string FormatPyFloat(double value);
// Python repr() of a str (quotes chosen and escapes applied like CPython).
std::string PyStringRepr(std::string_view s);

}  // namespace radixlm::chat
