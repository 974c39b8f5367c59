// The error type used inside the template engine.
//
// Inside src/chat/ the lexer, parser and renderer throw TemplateError (it keeps deep evaluation
// code readable); ChatTemplate catches it at the module boundary and returns a Status. Nothing
// thrown here ever leaves the module.
#pragma once

#include <exception>
#include <string>

#include "util/status.h"

namespace radixlm::chat {

enum class ErrorKind {
  kSyntax,     // the template source does not parse
  kUndefined,  // use of an undefined value where jinja2 raises UndefinedError
  kType,       // Python TypeError / ValueError / ZeroDivisionError equivalents
  kSecurity,   // what jinja2's immutable sandbox refuses (list.append, ...)
  kRaised,     // the template called raise_exception(message)
  kLimit,      // a runaway guard tripped (output size, recursion, step budget)
};

class TemplateError : public std::exception {
 public:
  TemplateError(ErrorKind kind, std::string message, int line = 0, int column = 0)
      : kind_(kind), message_(std::move(message)), line_(line), column_(column) {}

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }
  bool has_position() const { return line_ > 0; }
  void set_position(int line, int column) {
    line_ = line;
    column_ = column;
  }
  const char* what() const noexcept override { return message_.c_str(); }

  // "chat template syntax error at line 3, column 7: <message>" and similar.
  Status ToStatus() const;

 private:
  ErrorKind kind_;
  std::string message_;
  int line_;
  int column_;
};

[[noreturn]] inline void ThrowTypeError(std::string message) {
  throw TemplateError(ErrorKind::kType, std::move(message));
}

}  // namespace radixlm::chat
