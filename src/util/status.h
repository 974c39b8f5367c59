// Status and StatusOr<T>: the error values every module boundary returns.
//
// A Status is either OK or carries a code and a human-readable message naming the problem.
// StatusOr<T> holds either a T or a non-OK Status. Neither throws; callers check ok().
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace radixlm {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input (a request, a flag, a malformed file)
  kNotFound,
  kOutOfRange,
  kUnimplemented,    // a feature this build does not provide; the message says which
  kResourceExhausted,
  kInternal,         // a broken invariant
  kIoError,
  kAborted,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string msg) {
  return Status(StatusCode::kInvalidArgument, std::move(msg));
}
inline Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
inline Status OutOfRange(std::string msg) {
  return Status(StatusCode::kOutOfRange, std::move(msg));
}
inline Status Unimplemented(std::string msg) {
  return Status(StatusCode::kUnimplemented, std::move(msg));
}
inline Status ResourceExhausted(std::string msg) {
  return Status(StatusCode::kResourceExhausted, std::move(msg));
}
inline Status Internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }
inline Status IoError(std::string msg) { return Status(StatusCode::kIoError, std::move(msg)); }
inline Status Aborted(std::string msg) { return Status(StatusCode::kAborted, std::move(msg)); }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(Status&& status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT
  StatusOr(const T& value) : value_(value) {}  // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace radixlm

// Propagates a non-OK Status out of the enclosing function.
#define RADIXLM_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::radixlm::Status _st = (expr);              \
    if (!_st.ok()) return _st;                   \
  } while (0)

#define RADIXLM_CONCAT_INNER(a, b) a##b
#define RADIXLM_CONCAT(a, b) RADIXLM_CONCAT_INNER(a, b)
// RADIXLM_ASSIGN_OR_RETURN(auto x, MaybeX()); declares x or returns the error.
#define RADIXLM_ASSIGN_OR_RETURN(lhs, expr) \
  RADIXLM_ASSIGN_OR_RETURN_IMPL(RADIXLM_CONCAT(_status_or_, __LINE__), lhs, expr)
#define RADIXLM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
