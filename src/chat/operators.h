// Python semantics of jinja2's operators: arithmetic (int overflow is an error rather than a
// bigint), comparisons, membership and unary +/-. Errors are kType / kUndefined TemplateErrors
// worded like CPython's.
#pragma once

#include "chat/ast.h"
#include "chat/value.h"

namespace radixlm::chat {

Value BinaryOperation(BinaryOp op, const Value& a, const Value& b);
Value UnaryOperation(bool negate, const Value& operand);
bool CompareValues(CompareOp op, const Value& a, const Value& b);
// Python `item in container`.
bool Contains(const Value& container, const Value& item);
// Python `format % args` for %s, %r, %d, %i, %f and %% (what templates use).
std::string PercentFormat(const std::string& format, const Value& args);

}  // namespace radixlm::chat
