// Statement parsing: {% if %}, {% for %}, {% set %}, {% macro %}, {% filter %}, {% with %},
// {% break %} / {% continue %} (jinja2.ext.loopcontrols, which transformers enables) and
// transformers' {% generation %} block.
#include <algorithm>

#include "chat/lexer.h"
#include "chat/parser.h"
#include "chat/parser_internal.h"
#include "chat/template_error.h"

namespace radixlm::chat {

namespace {

std::string QuoteList(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += " or ";
    out += "'" + std::string(names[i]) + "'";
  }
  return out;
}

}  // namespace

std::unique_ptr<Stmt> Parser::NewStmt(StmtKind kind, const Token& at) const {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = kind;
  stmt->line = at.line;
  stmt->column = at.column;
  return stmt;
}

StmtList Parser::ParseBody(std::string_view block,
                           std::initializer_list<std::string_view> end_tags) {
  open_blocks_.emplace_back(block, std::vector<std::string_view>(end_tags));
  StmtList body;
  while (true) {
    const Token& token = Current();
    if (token.kind == TokenKind::kText) {
      auto text = NewStmt(StmtKind::kText, token);
      text->text = Next().value;
      body.push_back(std::move(text));
    } else if (token.kind == TokenKind::kVariableBegin) {
      auto output = NewStmt(StmtKind::kOutput, Next());
      output->expr = ParseTuple();
      if (Current().kind != TokenKind::kVariableEnd) {
        Fail(Current(), "expected '}}', got " + Describe(Current()));
      }
      Next();
      body.push_back(std::move(output));
    } else if (token.kind == TokenKind::kBlockBegin) {
      const Token& name = Peek();
      if (name.kind == TokenKind::kName &&
          std::find(end_tags.begin(), end_tags.end(), name.value) != end_tags.end()) {
        Next();  // leave the cursor on the end tag's name
        open_blocks_.pop_back();
        return body;
      }
      Next();
      body.push_back(ParseStatement());
    } else if (token.kind == TokenKind::kEnd) {
      if (end_tags.size() > 0) {
        Fail(token, "Unexpected end of template. Jinja was looking for the following tags: " +
                        QuoteList(open_blocks_.back().second) +
                        ". The innermost block that needs to be closed is '" + std::string(block) +
                        "'.");
      }
      open_blocks_.pop_back();
      return body;
    } else {
      Fail(token, "unexpected " + Describe(token));
    }
  }
}

void Parser::ExpectEndTag(std::string_view end_tag) {
  if (!SkipName(end_tag)) Fail(Current(), "expected '" + std::string(end_tag) + "'");
  ExpectBlockEnd();
}

std::unique_ptr<Stmt> Parser::ParseStatement() {
  const Token tag = Current();
  if (tag.kind != TokenKind::kName) Fail(tag, "tag name expected, got " + Describe(tag));
  DepthGuard guard(this, tag);
  Next();
  const std::string& name = tag.value;
  if (name == "if") return ParseIf(tag);
  if (name == "for") return ParseFor(tag);
  if (name == "set") return ParseSet(tag);
  if (name == "macro") return ParseMacro(tag);
  if (name == "filter") return ParseFilterBlock(tag);
  if (name == "with") return ParseWith(tag);
  if (name == "generation") return ParseScope(tag, "endgeneration");
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) Fail(tag, "'" + name + "' outside of a for loop");
    ExpectBlockEnd();
    return NewStmt(name == "break" ? StmtKind::kBreak : StmtKind::kContinue, tag);
  }
  if (name == "include" || name == "extends" || name == "import" || name == "from" ||
      name == "block" || name == "call" || name == "do" || name == "autoescape") {
    Fail(tag, "'" + name + "' tags are not supported by this template engine");
  }
  std::string message = "Encountered unknown tag '" + name + "'.";
  for (auto it = open_blocks_.rbegin(); it != open_blocks_.rend(); ++it) {
    if (it->second.empty()) continue;
    message += " Jinja was looking for the following tags: " + QuoteList(it->second) +
               ". The innermost block that needs to be closed is '" + std::string(it->first) + "'.";
    break;
  }
  Fail(tag, message);
}

std::unique_ptr<Stmt> Parser::ParseIf(const Token& tag) {
  auto stmt = NewStmt(StmtKind::kIf, tag);
  IfBranch first;
  first.condition = ParseTuple(/*with_condexpr=*/false);
  ExpectBlockEnd();
  first.body = ParseBody("if", {"elif", "else", "endif"});
  stmt->branches.push_back(std::move(first));
  while (true) {
    const std::string which = Next().value;
    if (which == "elif") {
      IfBranch branch;
      branch.condition = ParseTuple(/*with_condexpr=*/false);
      ExpectBlockEnd();
      branch.body = ParseBody("if", {"elif", "else", "endif"});
      stmt->branches.push_back(std::move(branch));
      continue;
    }
    ExpectBlockEnd();
    if (which == "else") {
      stmt->else_body = ParseBody("if", {"endif"});
      ExpectEndTag("endif");
    }
    return stmt;
  }
}

std::vector<std::string> Parser::ParseAssignNames(std::string_view extra_end) {
  std::vector<std::string> names;
  const bool parenthesized = SkipOp("(");
  while (true) {
    names.push_back(ExpectName());
    if (!SkipOp(",")) break;
    if (parenthesized ? IsOp(")") : (IsOp("=") || (!extra_end.empty() && IsName(extra_end)))) {
      break;  // trailing comma
    }
  }
  if (parenthesized) ExpectOp(")");
  return names;
}

std::unique_ptr<Stmt> Parser::ParseFor(const Token& tag) {
  auto stmt = NewStmt(StmtKind::kFor, tag);
  stmt->targets = ParseAssignNames("in");
  if (!SkipName("in")) Fail(Current(), "expected 'in', got " + Describe(Current()));
  stmt->expr = ParseTuple(/*with_condexpr=*/false, "recursive");
  if (SkipName("if")) stmt->condition = ParseExpression();
  if (IsName("recursive")) Fail(Current(), "recursive for loops are not supported");
  ExpectBlockEnd();
  ++loop_depth_;
  stmt->body = ParseBody("for", {"endfor", "else"});
  --loop_depth_;
  if (SkipName("else")) {
    ExpectBlockEnd();
    stmt->else_body = ParseBody("for", {"endfor"});
  }
  ExpectEndTag("endfor");
  return stmt;
}

std::unique_ptr<Stmt> Parser::ParseSet(const Token& tag) {
  if (Current().kind == TokenKind::kName && Peek().kind == TokenKind::kOperator &&
      Peek().value == "." && Peek(2).kind == TokenKind::kName) {
    auto stmt = NewStmt(StmtKind::kSetAttr, tag);
    stmt->targets.push_back(Next().value);
    Next();  // '.'
    stmt->targets.push_back(Next().value);
    ExpectOp("=");
    stmt->expr = ParseTuple();
    ExpectBlockEnd();
    return stmt;
  }
  std::vector<std::string> names = ParseAssignNames({});
  if (SkipOp("=")) {
    auto stmt = NewStmt(StmtKind::kSet, tag);
    stmt->targets = std::move(names);
    stmt->expr = ParseTuple();
    ExpectBlockEnd();
    return stmt;
  }
  if (names.size() != 1) Fail(Current(), "expected '='");
  auto stmt = NewStmt(StmtKind::kSetBlock, tag);
  stmt->targets = std::move(names);
  if (IsOp("|")) stmt->expr = ParseFilters(nullptr, /*start_inline=*/false);
  ExpectBlockEnd();
  stmt->body = ParseBody("set", {"endset"});
  ExpectEndTag("endset");
  return stmt;
}

std::unique_ptr<Stmt> Parser::ParseMacro(const Token& tag) {
  auto stmt = NewStmt(StmtKind::kMacro, tag);
  stmt->name = ExpectName();
  ExpectOp("(");
  while (!IsOp(")")) {
    if (!stmt->targets.empty()) ExpectOp(",");
    if (IsOp(")")) break;
    const Token at = Current();
    stmt->targets.push_back(ExpectName());
    if (SkipOp("=")) {
      stmt->values.push_back(ParseExpression());
    } else {
      if (!stmt->values.empty() && stmt->values.back() != nullptr) {
        Fail(at, "non-default argument follows default argument");
      }
      stmt->values.push_back(nullptr);
    }
  }
  ExpectOp(")");
  ExpectBlockEnd();
  const int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  stmt->body = ParseBody("macro", {"endmacro"});
  loop_depth_ = saved_loop_depth;
  ExpectEndTag("endmacro");
  return stmt;
}

std::unique_ptr<Stmt> Parser::ParseFilterBlock(const Token& tag) {
  auto stmt = NewStmt(StmtKind::kFilterBlock, tag);
  stmt->expr = ParseFilters(nullptr, /*start_inline=*/true);
  ExpectBlockEnd();
  stmt->body = ParseBody("filter", {"endfilter"});
  ExpectEndTag("endfilter");
  return stmt;
}

std::unique_ptr<Stmt> Parser::ParseWith(const Token& tag) {
  auto stmt = NewStmt(StmtKind::kWith, tag);
  while (Current().kind != TokenKind::kBlockEnd) {
    if (!stmt->targets.empty()) ExpectOp(",");
    stmt->targets.push_back(ExpectName());
    ExpectOp("=");
    stmt->values.push_back(ParseExpression());
  }
  ExpectBlockEnd();
  stmt->body = ParseBody("with", {"endwith"});
  ExpectEndTag("endwith");
  return stmt;
}

std::unique_ptr<Stmt> Parser::ParseScope(const Token& tag, std::string_view end_tag) {
  auto stmt = NewStmt(StmtKind::kScope, tag);
  ExpectBlockEnd();
  stmt->body = ParseBody(tag.value, {end_tag});
  ExpectEndTag(end_tag);
  return stmt;
}

std::unique_ptr<TemplateAst> ParseTemplate(std::string_view source) {
  auto ast = std::make_unique<TemplateAst>();
  ast->source = std::string(source);
  Parser parser(Tokenize(source));
  ast->body = parser.ParseBody("", {});
  return ast;
}

}  // namespace radixlm::chat
