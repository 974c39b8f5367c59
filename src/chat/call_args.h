// Binding of call arguments to named parameters, Python style, for the built-in filters,
// tests, methods and globals.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat/value.h"

namespace radixlm::chat {

class BoundArgs {
 public:
  // Binds positional then keyword arguments to `params` (in order). Throws a kType
  // TemplateError for too many arguments, unknown or duplicate keywords.
  BoundArgs(std::string_view function, const CallArgs& args,
            std::initializer_list<std::string_view> params);

  // The argument for parameter `index`, or null when it was not passed.
  const Value* Get(size_t index) const { return bound_[index]; }
  bool Has(size_t index) const { return bound_[index] != nullptr; }
  // Required parameter: throws "f() missing required argument 'name'" when absent.
  const Value& Required(size_t index) const;

  // Typed accessors with defaults; throw a kType TemplateError on a wrong type.
  int64_t IntOr(size_t index, int64_t fallback) const;
  bool BoolOr(size_t index, bool fallback) const;  // any value: its truthiness
  std::string StringOr(size_t index, const std::string& fallback) const;
  // A string argument where None means "not given" (Python's strip(None)).
  const std::string* OptionalString(size_t index) const;

 private:
  std::string function_;
  std::vector<std::string_view> params_;
  std::vector<const Value*> bound_;
};

}  // namespace radixlm::chat
