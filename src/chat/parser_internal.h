// The recursive-descent parser shared by parse_expr.cc (expressions) and parse_stmt.cc
// (statements). Internal to src/chat/.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace radixlm::chat {

class Parser {
 public:
  // Deeper nesting of expressions or blocks than this is a syntax error (protects the stack).
  static constexpr int kMaxNesting = 128;

  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  // Statements until one of `end_tags` opens a block ({% end_tag ...); the cursor is then left
  // on that tag's name. With no end tags, parses to the end of the template. `block` names the
  // block being closed, for error messages.
  StmtList ParseBody(std::string_view block, std::initializer_list<std::string_view> end_tags);

  // Expressions (parse_expr.cc).
  ExprPtr ParseExpression(bool with_condexpr = true);
  // Comma-separated expressions become a tuple (a kList); `extra_end` names also end it.
  ExprPtr ParseTuple(bool with_condexpr = true, std::string_view extra_end = {},
                     bool explicit_parentheses = false);
  // Filters after `input` (a null input starts inline, as in {% filter upper %}).
  ExprPtr ParseFilters(ExprPtr input, bool start_inline);

 private:
  // Statements (parse_stmt.cc).
  std::unique_ptr<Stmt> ParseStatement();
  std::unique_ptr<Stmt> ParseIf(const Token& tag);
  std::unique_ptr<Stmt> ParseFor(const Token& tag);
  std::unique_ptr<Stmt> ParseSet(const Token& tag);
  std::unique_ptr<Stmt> ParseMacro(const Token& tag);
  std::unique_ptr<Stmt> ParseFilterBlock(const Token& tag);
  std::unique_ptr<Stmt> ParseWith(const Token& tag);
  std::unique_ptr<Stmt> ParseScope(const Token& tag, std::string_view end_tag);
  std::vector<std::string> ParseAssignNames(std::string_view extra_end);
  // Consumes `{% end_tag %}` after ParseBody stopped on it.
  void ExpectEndTag(std::string_view end_tag);

  // Expression levels (parse_expr.cc).
  ExprPtr ParseCondExpr();
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParseList(const Token& open);
  ExprPtr ParseDict(const Token& open);
  ExprPtr ParsePostfix(ExprPtr node);
  ExprPtr ParseSubscript(ExprPtr node, const Token& open);
  ExprPtr ParseFilterExpr(ExprPtr node);
  ExprPtr ParseTest(ExprPtr node);
  void ParseCallArgs(Expr* call);
  // After '(' : the call node for `callee(...)`.
  ExprPtr MakeCall(ExprPtr callee);

  // Token stream.
  const Token& Current() const { return tokens_[pos_]; }
  const Token& Peek(size_t ahead = 1) const;
  Token Next();
  bool IsOp(std::string_view op) const;
  bool IsName(std::string_view name) const;
  bool SkipOp(std::string_view op);
  bool SkipName(std::string_view name);
  void ExpectOp(std::string_view op);
  std::string ExpectName();
  void ExpectBlockEnd();
  // True at a token that ends a tuple: }}, %}, ), or the name `extra_end`.
  bool AtTupleEnd(std::string_view extra_end) const;
  std::string Describe(const Token& token) const;
  [[noreturn]] void Fail(const Token& at, const std::string& message) const;
  ExprPtr NewExpr(ExprKind kind, const Token& at) const;
  std::unique_ptr<Stmt> NewStmt(StmtKind kind, const Token& at) const;

  // RAII nesting counter.
  class DepthGuard {
   public:
    DepthGuard(Parser* parser, const Token& at);
    ~DepthGuard() { --parser_->depth_; }

   private:
    Parser* parser_;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // break/continue are valid only inside a for body
  // Open blocks with the end tags ParseBody is looking for, for error messages.
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> open_blocks_;
};

}  // namespace radixlm::chat
