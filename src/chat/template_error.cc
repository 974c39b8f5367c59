#include "chat/template_error.h"

namespace radixlm::chat {

Status TemplateError::ToStatus() const {
  std::string where;
  if (has_position()) {
    where = " at line " + std::to_string(line_) + ", column " + std::to_string(column_);
  }
  switch (kind_) {
    case ErrorKind::kSyntax:
      return InvalidArgument("chat template syntax error" + where + ": " + message_);
    case ErrorKind::kRaised:
      return InvalidArgument("chat template raised an exception" + where + ": " + message_);
    case ErrorKind::kLimit:
      return ResourceExhausted("chat template render limit" + where + ": " + message_);
    case ErrorKind::kUndefined:
    case ErrorKind::kType:
    case ErrorKind::kSecurity:
      break;
  }
  return InvalidArgument("chat template render error" + where + ": " + message_);
}

}  // namespace radixlm::chat
