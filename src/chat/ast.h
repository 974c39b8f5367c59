// The parsed template: expression and statement trees, immutable after parsing.
//
// One Expr / Stmt struct per tree level with a kind tag keeps the renderer a pair of switches.
// Every node carries its source position for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace radixlm::chat {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtList = std::vector<std::unique_ptr<Stmt>>;

enum class ExprKind {
  kLiteral,  // literal
  kName,     // name
  kList,     // operands = items
  kTuple,    // operands = items
  kDict,     // operands = key0, value0, key1, value1, ...
  kGetAttr,  // operands[0].name
  kGetItem,  // operands[0][operands[1]]
  kSlice,    // operands[0][operands[1]:operands[2]:operands[3]] (null = omitted)
  kCall,     // operands[0](args, kwargs)
  kFilter,   // operands[0] | name(args, kwargs); operands[0] null inside {% filter %}
  kTest,     // operands[0] is [not] name(args, kwargs)
  kNeg,      // -operands[0]
  kPos,      // +operands[0]
  kNot,      // not operands[0]
  kBinary,   // operands[0] bin_op operands[1]
  kConcat,   // operands joined with ~
  kCompare,  // operands[0] cmp_ops[0] operands[1] cmp_ops[1] operands[2] ...
  kAnd,      // operands[0] and operands[1]
  kOr,       // operands[0] or operands[1]
  kCond,     // operands[0] if operands[1] else operands[2] (else may be null)
};

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  int line = 0;
  int column = 0;
  Value literal;
  std::string name;  // kName, kGetAttr attribute, kFilter / kTest name
  BinaryOp binary_op = BinaryOp::kAdd;
  std::vector<CompareOp> compare_ops;
  bool negated = false;  // kTest: `is not`
  std::vector<ExprPtr> operands;
  std::vector<ExprPtr> args;  // call / filter / test positional arguments
  std::vector<std::pair<std::string, ExprPtr>> kwargs;

  Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;
  // Iterative: a chain like a + b + ... of 10^5 terms is a tree that deep, and destroying it one
  // recursive call per level would overflow the stack.
  ~Expr();
};

inline Expr::~Expr() {
  std::vector<ExprPtr> pending;
  auto take_children = [&pending](Expr& expr) {
    for (ExprPtr& child : expr.operands) {
      if (child) pending.push_back(std::move(child));
    }
    for (ExprPtr& child : expr.args) {
      if (child) pending.push_back(std::move(child));
    }
    for (auto& [name, child] : expr.kwargs) {
      if (child) pending.push_back(std::move(child));
    }
  };
  take_children(*this);
  while (!pending.empty()) {
    ExprPtr expr = std::move(pending.back());
    pending.pop_back();
    take_children(*expr);
  }  // each node is destroyed with no children left
}

enum class StmtKind {
  kText,      // text
  kOutput,    // {{ expr }}
  kIf,        // branches (cond, body); else_body
  kFor,       // for targets in expr [if cond]: body; else_body
  kSet,       // set targets = expr
  kSetAttr,   // set targets[0].targets[1] = expr (namespace attribute)
  kSetBlock,  // set targets[0] [| filters] %} body {% endset
  kMacro,     // macro name(params = defaults): body
  kBreak,
  kContinue,
  kFilterBlock,  // filter expr %} body {% endfilter
  kWith,         // with targets = values: body
  kScope,        // body rendered in place (e.g. transformers' {% generation %})
};

struct IfBranch {
  ExprPtr condition;
  StmtList body;
};

struct Stmt {
  StmtKind kind = StmtKind::kText;
  int line = 0;
  int column = 0;
  std::string text;
  // kOutput / kSet / kSetAttr / kWith: the value; kFor: the iterable; kFilterBlock and
  // kSetBlock: a filter chain whose innermost input is null (the captured body text goes there).
  ExprPtr expr;
  ExprPtr condition;  // kFor: the inline `if` filter
  std::vector<IfBranch> branches;
  StmtList body;
  StmtList else_body;
  std::vector<std::string> targets;
  std::vector<ExprPtr> values;  // kWith values; kMacro parameter defaults (null = required)
  std::string name;             // kMacro
};

// A parsed template: the statement list plus the source it came from.
struct TemplateAst {
  std::string source;
  StmtList body;
};

}  // namespace radixlm::chat
