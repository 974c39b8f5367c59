// Token-stream helpers of the parser: lookahead, expectations, error reporting, node creation.
#include <algorithm>

#include "chat/parser_internal.h"
#include "chat/template_error.h"

namespace radixlm::chat {

const Token& Parser::Peek(size_t ahead) const {
  const size_t at = std::min(pos_ + ahead, tokens_.size() - 1);
  return tokens_[at];
}

Token Parser::Next() {
  Token token = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return token;
}

bool Parser::IsOp(std::string_view op) const {
  return Current().kind == TokenKind::kOperator && Current().value == op;
}

bool Parser::IsName(std::string_view name) const {
  return Current().kind == TokenKind::kName && Current().value == name;
}

bool Parser::SkipOp(std::string_view op) {
  if (!IsOp(op)) return false;
  Next();
  return true;
}

bool Parser::SkipName(std::string_view name) {
  if (!IsName(name)) return false;
  Next();
  return true;
}

void Parser::ExpectOp(std::string_view op) {
  if (!SkipOp(op))
    Fail(Current(), "expected '" + std::string(op) + "', got " + Describe(Current()));
}

std::string Parser::ExpectName() {
  if (Current().kind != TokenKind::kName) {
    Fail(Current(), "expected a name, got " + Describe(Current()));
  }
  return Next().value;
}

void Parser::ExpectBlockEnd() {
  if (Current().kind != TokenKind::kBlockEnd) {
    Fail(Current(), "expected end of statement block, got " + Describe(Current()));
  }
  Next();
}

bool Parser::AtTupleEnd(std::string_view extra_end) const {
  const Token& t = Current();
  if (t.kind == TokenKind::kVariableEnd || t.kind == TokenKind::kBlockEnd ||
      t.kind == TokenKind::kEnd) {
    return true;
  }
  if (t.kind == TokenKind::kOperator && t.value == ")") return true;
  return !extra_end.empty() && IsName(extra_end);
}

std::string Parser::Describe(const Token& token) const {
  switch (token.kind) {
    case TokenKind::kText:
      return "template data";
    case TokenKind::kVariableBegin:
      return "'{{'";
    case TokenKind::kVariableEnd:
      return "'}}'";
    case TokenKind::kBlockBegin:
      return "'{%'";
    case TokenKind::kBlockEnd:
      return "'%}'";
    case TokenKind::kName:
    case TokenKind::kOperator:
      return "'" + token.value + "'";
    case TokenKind::kString:
      return "string literal";
    case TokenKind::kInteger:
    case TokenKind::kFloat:
      return "number literal";
    case TokenKind::kEnd:
      return "end of template";
  }
  return "token";
}

void Parser::Fail(const Token& at, const std::string& message) const {
  throw TemplateError(ErrorKind::kSyntax, message, at.line, at.column);
}

ExprPtr Parser::NewExpr(ExprKind kind, const Token& at) const {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->line = at.line;
  expr->column = at.column;
  return expr;
}

Parser::DepthGuard::DepthGuard(Parser* parser, const Token& at) : parser_(parser) {
  if (++parser_->depth_ > kMaxNesting) parser_->Fail(at, "template nested too deeply");
}

}  // namespace radixlm::chat
