#include "chat/call_args.h"

#include "chat/template_error.h"

namespace radixlm::chat {

BoundArgs::BoundArgs(std::string_view function, const CallArgs& args,
                     std::initializer_list<std::string_view> params)
    : function_(function), params_(params), bound_(params.size(), nullptr) {
  if (args.positional.size() > params_.size()) {
    ThrowTypeError(function_ + "() takes at most " + std::to_string(params_.size()) +
                   " argument(s) (" + std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) bound_[i] = &args.positional[i];
  for (const auto& [key, value] : args.keyword) {
    size_t index = 0;
    while (index < params_.size() && params_[index] != key) ++index;
    if (index == params_.size()) {
      ThrowTypeError(function_ + "() got an unexpected keyword argument '" + key + "'");
    }
    if (bound_[index] != nullptr) {
      ThrowTypeError(function_ + "() got multiple values for argument '" + key + "'");
    }
    bound_[index] = &value;
  }
}

const Value& BoundArgs::Required(size_t index) const {
  if (bound_[index] == nullptr) {
    ThrowTypeError(function_ + "() missing required argument '" + std::string(params_[index]) +
                   "'");
  }
  return *bound_[index];
}

int64_t BoundArgs::IntOr(size_t index, int64_t fallback) const {
  const Value* v = bound_[index];
  if (v == nullptr || v->is_none()) return fallback;
  if (!v->is_integral()) {
    ThrowTypeError(function_ + "() argument '" + std::string(params_[index]) +
                   "' must be an integer, not " + v->TypeName());
  }
  return v->ToInt();
}

bool BoundArgs::BoolOr(size_t index, bool fallback) const {
  const Value* v = bound_[index];
  return v == nullptr ? fallback : v->Truthy();
}

std::string BoundArgs::StringOr(size_t index, const std::string& fallback) const {
  const Value* v = bound_[index];
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    ThrowTypeError(function_ + "() argument '" + std::string(params_[index]) +
                   "' must be a string, not " + v->TypeName());
  }
  return v->as_string();
}

const std::string* BoundArgs::OptionalString(size_t index) const {
  const Value* v = bound_[index];
  if (v == nullptr || v->is_none()) return nullptr;
  if (!v->is_string()) {
    ThrowTypeError(function_ + "() argument '" + std::string(params_[index]) +
                   "' must be a string or None, not " + v->TypeName());
  }
  return &v->as_string();
}

}  // namespace radixlm::chat
