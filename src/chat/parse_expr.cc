// Expression parsing: precedence climbing in the same levels as jinja2/parser.py.
#include "chat/parser_internal.h"
#include "chat/template_error.h"

namespace radixlm::chat {

ExprPtr Parser::ParseExpression(bool with_condexpr) {
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

ExprPtr Parser::ParseTuple(bool with_condexpr, std::string_view extra_end,
                           bool explicit_parentheses) {
  const Token start = Current();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) ExpectOp(",");
    if (AtTupleEnd(extra_end)) break;
    items.push_back(ParseExpression(with_condexpr));
    if (IsOp(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parentheses)
      Fail(Current(), "expected an expression, got " + Describe(Current()));
  }
  ExprPtr tuple = NewExpr(ExprKind::kTuple, start);
  tuple->operands = std::move(items);
  return tuple;
}

ExprPtr Parser::ParseCondExpr() {
  ExprPtr expr = ParseOr();
  while (IsName("if")) {
    const Token at = Next();
    ExprPtr cond = NewExpr(ExprKind::kCond, at);
    cond->operands.push_back(std::move(expr));
    cond->operands.push_back(ParseOr());
    if (SkipName("else")) {
      DepthGuard guard(this, at);
      cond->operands.push_back(ParseCondExpr());
    } else {
      cond->operands.push_back(nullptr);
    }
    expr = std::move(cond);
  }
  return expr;
}

ExprPtr Parser::ParseOr() {
  ExprPtr left = ParseAnd();
  while (IsName("or")) {
    ExprPtr node = NewExpr(ExprKind::kOr, Next());
    node->operands.push_back(std::move(left));
    node->operands.push_back(ParseAnd());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::ParseAnd() {
  ExprPtr left = ParseNot();
  while (IsName("and")) {
    ExprPtr node = NewExpr(ExprKind::kAnd, Next());
    node->operands.push_back(std::move(left));
    node->operands.push_back(ParseNot());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::ParseNot() {
  if (IsName("not")) {
    DepthGuard guard(this, Current());
    ExprPtr node = NewExpr(ExprKind::kNot, Next());
    node->operands.push_back(ParseNot());
    return node;
  }
  return ParseCompare();
}

ExprPtr Parser::ParseCompare() {
  const Token start = Current();
  ExprPtr first = ParseMath1();
  ExprPtr node;
  while (true) {
    CompareOp op;
    const Token& t = Current();
    if (t.kind == TokenKind::kOperator && t.value == "==") {
      op = CompareOp::kEq;
    } else if (t.kind == TokenKind::kOperator && t.value == "!=") {
      op = CompareOp::kNe;
    } else if (t.kind == TokenKind::kOperator && t.value == "<") {
      op = CompareOp::kLt;
    } else if (t.kind == TokenKind::kOperator && t.value == "<=") {
      op = CompareOp::kLe;
    } else if (t.kind == TokenKind::kOperator && t.value == ">") {
      op = CompareOp::kGt;
    } else if (t.kind == TokenKind::kOperator && t.value == ">=") {
      op = CompareOp::kGe;
    } else if (IsName("in")) {
      op = CompareOp::kIn;
    } else if (IsName("not") && Peek().kind == TokenKind::kName && Peek().value == "in") {
      Next();
      op = CompareOp::kNotIn;
    } else {
      break;
    }
    Next();
    if (!node) {
      node = NewExpr(ExprKind::kCompare, start);
      node->operands.push_back(std::move(first));
    }
    node->compare_ops.push_back(op);
    node->operands.push_back(ParseMath1());
  }
  return node ? std::move(node) : std::move(first);
}

ExprPtr Parser::ParseMath1() {
  ExprPtr left = ParseConcat();
  while (IsOp("+") || IsOp("-")) {
    const Token at = Next();
    ExprPtr node = NewExpr(ExprKind::kBinary, at);
    node->binary_op = at.value == "+" ? BinaryOp::kAdd : BinaryOp::kSub;
    node->operands.push_back(std::move(left));
    node->operands.push_back(ParseConcat());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::ParseConcat() {
  const Token start = Current();
  ExprPtr first = ParseMath2();
  if (!IsOp("~")) return first;
  ExprPtr node = NewExpr(ExprKind::kConcat, start);
  node->operands.push_back(std::move(first));
  while (SkipOp("~")) node->operands.push_back(ParseMath2());
  return node;
}

ExprPtr Parser::ParseMath2() {
  ExprPtr left = ParsePow();
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    const Token at = Next();
    ExprPtr node = NewExpr(ExprKind::kBinary, at);
    node->binary_op = at.value == "*"    ? BinaryOp::kMul
                      : at.value == "/"  ? BinaryOp::kDiv
                      : at.value == "//" ? BinaryOp::kFloorDiv
                                         : BinaryOp::kMod;
    node->operands.push_back(std::move(left));
    node->operands.push_back(ParsePow());
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::ParsePow() {
  ExprPtr left = ParseUnary(/*with_filter=*/true);
  while (IsOp("**")) {
    ExprPtr node = NewExpr(ExprKind::kBinary, Next());
    node->binary_op = BinaryOp::kPow;
    node->operands.push_back(std::move(left));
    node->operands.push_back(ParseUnary(/*with_filter=*/true));
    left = std::move(node);
  }
  return left;
}

ExprPtr Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(this, Current());
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    const Token at = Next();
    node = NewExpr(at.value == "-" ? ExprKind::kNeg : ExprKind::kPos, at);
    node->operands.push_back(ParseUnary(/*with_filter=*/false));
  } else {
    node = ParsePrimary();
  }
  node = ParsePostfix(std::move(node));
  if (with_filter) node = ParseFilterExpr(std::move(node));
  return node;
}

ExprPtr Parser::ParsePrimary() {
  const Token token = Current();
  switch (token.kind) {
    case TokenKind::kName: {
      Next();
      ExprPtr node = NewExpr(ExprKind::kLiteral, token);
      if (token.value == "true" || token.value == "True") {
        node->literal = Value::Bool(true);
      } else if (token.value == "false" || token.value == "False") {
        node->literal = Value::Bool(false);
      } else if (token.value == "none" || token.value == "None") {
        node->literal = Value::None();
      } else {
        node->kind = ExprKind::kName;
        node->name = token.value;
      }
      return node;
    }
    case TokenKind::kString: {
      std::string text = Next().value;
      while (Current().kind == TokenKind::kString) text += Next().value;  // "a" "b"
      ExprPtr node = NewExpr(ExprKind::kLiteral, token);
      node->literal = Value::String(std::move(text));
      return node;
    }
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      Next();
      ExprPtr node = NewExpr(ExprKind::kLiteral, token);
      node->literal = token.kind == TokenKind::kInteger ? Value::Int(token.int_value)
                                                        : Value::Float(token.float_value);
      return node;
    }
    case TokenKind::kOperator:
      if (token.value == "(") {
        Next();
        ExprPtr node = ParseTuple(/*with_condexpr=*/true, {}, /*explicit_parentheses=*/true);
        ExpectOp(")");
        return node;
      }
      if (token.value == "[") return ParseList(Next());
      if (token.value == "{") return ParseDict(Next());
      break;
    default:
      break;
  }
  Fail(token, "unexpected " + Describe(token));
}

ExprPtr Parser::ParseList(const Token& open) {
  ExprPtr node = NewExpr(ExprKind::kList, open);
  while (!IsOp("]")) {
    if (!node->operands.empty()) ExpectOp(",");
    if (IsOp("]")) break;
    node->operands.push_back(ParseExpression());
  }
  ExpectOp("]");
  return node;
}

ExprPtr Parser::ParseDict(const Token& open) {
  ExprPtr node = NewExpr(ExprKind::kDict, open);
  while (!IsOp("}")) {
    if (!node->operands.empty()) ExpectOp(",");
    if (IsOp("}")) break;
    node->operands.push_back(ParseExpression());
    ExpectOp(":");
    node->operands.push_back(ParseExpression());
  }
  ExpectOp("}");
  return node;
}

ExprPtr Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    if (IsOp(".")) {
      const Token at = Next();
      if (Current().kind == TokenKind::kInteger) {  // x.0 is x[0]
        ExprPtr item = NewExpr(ExprKind::kGetItem, at);
        ExprPtr index = NewExpr(ExprKind::kLiteral, Current());
        index->literal = Value::Int(Next().int_value);
        item->operands.push_back(std::move(node));
        item->operands.push_back(std::move(index));
        node = std::move(item);
        continue;
      }
      ExprPtr attr = NewExpr(ExprKind::kGetAttr, at);
      attr->name = ExpectName();
      attr->operands.push_back(std::move(node));
      node = std::move(attr);
    } else if (IsOp("[")) {
      node = ParseSubscript(std::move(node), Next());
    } else if (IsOp("(")) {
      Next();
      node = MakeCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::MakeCall(ExprPtr callee) {
  ExprPtr call = std::make_unique<Expr>();
  call->kind = ExprKind::kCall;
  call->line = callee->line;  // errors point at the start of `f(...)`
  call->column = callee->column;
  call->operands.push_back(std::move(callee));
  ParseCallArgs(call.get());
  return call;
}

ExprPtr Parser::ParseSubscript(ExprPtr node, const Token& open) {
  DepthGuard guard(this, open);
  std::vector<ExprPtr> parts;  // start, stop, step
  bool is_slice = false;
  if (!IsOp(":")) parts.push_back(ParseExpression());
  if (SkipOp(":")) {
    is_slice = true;
    if (parts.empty()) parts.push_back(nullptr);
    parts.push_back(IsOp(":") || IsOp("]") ? nullptr : ParseExpression());
    if (SkipOp(":")) {
      parts.push_back(IsOp("]") ? nullptr : ParseExpression());
    } else {
      parts.push_back(nullptr);
    }
  }
  ExpectOp("]");
  ExprPtr out = NewExpr(is_slice ? ExprKind::kSlice : ExprKind::kGetItem, open);
  out->operands.push_back(std::move(node));
  for (auto& part : parts) out->operands.push_back(std::move(part));
  return out;
}

void Parser::ParseCallArgs(Expr* call) {
  while (!IsOp(")")) {
    if (!call->args.empty() || !call->kwargs.empty()) ExpectOp(",");
    if (IsOp(")")) break;
    if (IsOp("*") || IsOp("**")) Fail(Current(), "*args and **kwargs calls are not supported");
    if (Current().kind == TokenKind::kName && Peek().kind == TokenKind::kOperator &&
        Peek().value == "=") {
      std::string key = Next().value;
      Next();  // '='
      call->kwargs.emplace_back(std::move(key), ParseExpression());
    } else {
      if (!call->kwargs.empty()) {
        Fail(Current(), "positional argument follows keyword argument");
      }
      call->args.push_back(ParseExpression());
    }
  }
  ExpectOp(")");
}

ExprPtr Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (IsOp("|")) {
      node = ParseFilters(std::move(node), /*start_inline=*/false);
    } else if (IsName("is")) {
      node = ParseTest(std::move(node));
    } else if (IsOp("(")) {
      Next();
      node = MakeCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::ParseFilters(ExprPtr input, bool start_inline) {
  while (IsOp("|") || start_inline) {
    if (!start_inline) Next();
    start_inline = false;
    const Token at = Current();
    ExprPtr filter = NewExpr(ExprKind::kFilter, at);
    filter->name = ExpectName();
    while (SkipOp(".")) filter->name += "." + ExpectName();
    filter->operands.push_back(std::move(input));
    if (SkipOp("(")) ParseCallArgs(filter.get());
    input = std::move(filter);
  }
  return input;
}

ExprPtr Parser::ParseTest(ExprPtr node) {
  const Token at = Next();  // 'is'
  ExprPtr test = NewExpr(ExprKind::kTest, at);
  test->negated = SkipName("not");
  test->name = ExpectName();
  while (SkipOp(".")) test->name += "." + ExpectName();
  test->operands.push_back(std::move(node));
  const Token& t = Current();
  if (SkipOp("(")) {
    ParseCallArgs(test.get());
  } else if ((t.kind == TokenKind::kName || t.kind == TokenKind::kString ||
              t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat ||
              (t.kind == TokenKind::kOperator && (t.value == "[" || t.value == "{"))) &&
             !IsName("else") && !IsName("or") && !IsName("and")) {
    if (IsName("is")) Fail(t, "You cannot chain multiple tests with is");
    test->args.push_back(ParsePostfix(ParsePrimary()));
  }
  return test;
}

}  // namespace radixlm::chat
