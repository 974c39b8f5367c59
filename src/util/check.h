// Invariant checks: the second of three levels of checks.
//   1. Bad input from a user or a file: return a Status (util/status.h), never a CHECK.
//   2. Internal invariants whose failure would corrupt state (a KV slot freed twice, a radix
//      node unlocked below zero): RADIXLM_CHECK, always on, also in Release builds.
//   3. Invariants too expensive to check on every call (a walk over the whole tree):
//      RADIXLM_DCHECK, on in builds without NDEBUG or with RADIXLM_DCHECK_ALWAYS_ON defined
//      (cmake -DRADIXLM_DCHECK=ON; the sanitizer build of scripts/test.sh has it).
//
//   RADIXLM_CHECK(slot < size) << "slot " << slot;  // message optional, evaluated on failure only
//   RADIXLM_CHECK_EQ(a, b);  // also _NE _LT _LE _GT _GE: prints both values
//   RADIXLM_CHECK_OK(status_expr);  // a Status that must be ok: prints it
//
// A failed check writes "file:line: CHECK failed: <condition> <values>: <message>" to stderr in
// one write and aborts. A DCHECK that is off compiles its condition (so it cannot rot) but never
// evaluates it.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "util/status.h"

namespace radixlm::internal {

// Collects a failed check's message; its destructor prints it and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, std::string_view condition);
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure();

  std::ostream& stream() { return stream_; }

 private:
  std::string header_;         // "file:line: CHECK failed: condition"
  std::ostringstream stream_;  // the message, if any
};

// Gives the message stream of a failed check the type void, so RADIXLM_CHECK is an expression
// of type void on both branches of its conditional.
struct CheckVoidify {
  void operator&(std::ostream&) {}
};

// "a == b (3 vs. 4)" for a failed RADIXLM_CHECK_EQ(a, b); nullopt when the check holds.
template <typename A, typename B>
std::string CheckOpMessage(const A& a, const B& b, const char* expression) {
  std::ostringstream out;
  out << expression << " (" << a << " vs. " << b << ")";
  return out.str();
}

#define RADIXLM_INTERNAL_DEFINE_CHECK_OP(name, op)                                         \
  template <typename A, typename B>                                                        \
  std::optional<std::string> Check##name(const A& a, const B& b, const char* expression) { \
    if (a op b) [[likely]]                                                                 \
      return std::nullopt;                                                                 \
    return CheckOpMessage(a, b, expression);                                               \
  }
RADIXLM_INTERNAL_DEFINE_CHECK_OP(EQ, ==)
RADIXLM_INTERNAL_DEFINE_CHECK_OP(NE, !=)
RADIXLM_INTERNAL_DEFINE_CHECK_OP(LT, <)
RADIXLM_INTERNAL_DEFINE_CHECK_OP(LE, <=)
RADIXLM_INTERNAL_DEFINE_CHECK_OP(GT, >)
RADIXLM_INTERNAL_DEFINE_CHECK_OP(GE, >=)
#undef RADIXLM_INTERNAL_DEFINE_CHECK_OP

}  // namespace radixlm::internal

#define RADIXLM_CHECK(condition)                    \
  __builtin_expect(static_cast<bool>(condition), 1) \
      ? (void)0                                     \
      : ::radixlm::internal::CheckVoidify() &       \
            ::radixlm::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

// `switch (0) case 0: default:` makes the macro one statement that an `else` after it cannot
// attach to, while still letting a message be streamed into it.
#define RADIXLM_INTERNAL_CHECK_OP(name, op, a, b)                          \
  switch (0)                                                               \
  case 0:                                                                  \
  default:                                                                 \
    if (const std::optional<std::string> radixlm_check_failed =            \
            ::radixlm::internal::Check##name((a), (b), #a " " #op " " #b); \
        !radixlm_check_failed.has_value()) [[likely]] {                    \
    } else                                                                 \
      ::radixlm::internal::CheckFailure(__FILE__, __LINE__, *radixlm_check_failed).stream()

#define RADIXLM_CHECK_EQ(a, b) RADIXLM_INTERNAL_CHECK_OP(EQ, ==, a, b)
#define RADIXLM_CHECK_NE(a, b) RADIXLM_INTERNAL_CHECK_OP(NE, !=, a, b)
#define RADIXLM_CHECK_LT(a, b) RADIXLM_INTERNAL_CHECK_OP(LT, <, a, b)
#define RADIXLM_CHECK_LE(a, b) RADIXLM_INTERNAL_CHECK_OP(LE, <=, a, b)
#define RADIXLM_CHECK_GT(a, b) RADIXLM_INTERNAL_CHECK_OP(GT, >, a, b)
#define RADIXLM_CHECK_GE(a, b) RADIXLM_INTERNAL_CHECK_OP(GE, >=, a, b)

#define RADIXLM_CHECK_OK(status_expr)                                                            \
  switch (0)                                                                                     \
  case 0:                                                                                        \
  default:                                                                                       \
    if (const ::radixlm::Status radixlm_check_status = (status_expr); radixlm_check_status.ok()) \
        [[likely]] {                                                                             \
    } else                                                                                       \
      ::radixlm::internal::CheckFailure(__FILE__, __LINE__, #status_expr " is OK").stream()      \
          << radixlm_check_status.ToString()

#if !defined(NDEBUG) || defined(RADIXLM_DCHECK_ALWAYS_ON)
#define RADIXLM_DCHECK_IS_ON 1
#define RADIXLM_DCHECK(condition) RADIXLM_CHECK(condition)
#define RADIXLM_DCHECK_EQ(a, b) RADIXLM_CHECK_EQ(a, b)
#define RADIXLM_DCHECK_NE(a, b) RADIXLM_CHECK_NE(a, b)
#define RADIXLM_DCHECK_LT(a, b) RADIXLM_CHECK_LT(a, b)
#define RADIXLM_DCHECK_LE(a, b) RADIXLM_CHECK_LE(a, b)
#define RADIXLM_DCHECK_GT(a, b) RADIXLM_CHECK_GT(a, b)
#define RADIXLM_DCHECK_GE(a, b) RADIXLM_CHECK_GE(a, b)
#define RADIXLM_DCHECK_OK(status_expr) RADIXLM_CHECK_OK(status_expr)
#else
#define RADIXLM_DCHECK_IS_ON 0
#define RADIXLM_DCHECK(condition) \
  while (false) RADIXLM_CHECK(condition)
#define RADIXLM_DCHECK_EQ(a, b) \
  while (false) RADIXLM_CHECK_EQ(a, b)
#define RADIXLM_DCHECK_NE(a, b) \
  while (false) RADIXLM_CHECK_NE(a, b)
#define RADIXLM_DCHECK_LT(a, b) \
  while (false) RADIXLM_CHECK_LT(a, b)
#define RADIXLM_DCHECK_LE(a, b) \
  while (false) RADIXLM_CHECK_LE(a, b)
#define RADIXLM_DCHECK_GT(a, b) \
  while (false) RADIXLM_CHECK_GT(a, b)
#define RADIXLM_DCHECK_GE(a, b) \
  while (false) RADIXLM_CHECK_GE(a, b)
#define RADIXLM_DCHECK_OK(status_expr) \
  while (false) RADIXLM_CHECK_OK(status_expr)
#endif
