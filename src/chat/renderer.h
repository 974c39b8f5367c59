// Renderer: walks a TemplateAst and produces text, with jinja2's runtime semantics.
//
// One Renderer renders once; it is cheap to build and not shared between threads (the AST it
// reads is immutable and may be shared). Scoping follows jinja2: every for-loop iteration,
// macro call and {% with %} gets a fresh Frame whose parent is the enclosing one, so `set`
// inside a loop does not leak out (namespace() is the escape hatch); `if` opens no scope.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/render_limits.h"
#include "chat/value.h"

namespace radixlm::chat {

// A variable scope. Lookups walk outwards through the parents.
class Frame {
 public:
  explicit Frame(const Frame* parent) : parent_(parent) {}
  const Value* Lookup(std::string_view name) const;
  void Set(const std::string& name, Value value);

 private:
  const Frame* parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};

class Renderer {
 public:
  // Expressions nested deeper than this (a + b + ... with thousands of terms, long filter
  // chains) are a kLimit error: evaluation recurses once per level.
  static constexpr int kMaxEvalDepth = 1000;

  Renderer(const TemplateAst& ast, const RenderLimits& limits) : ast_(ast), limits_(limits) {}
  ~Renderer();

  // Renders the template with `globals` (context variables and built-in functions) as the
  // outermost scope. Throws TemplateError.
  std::string Render(const Frame& globals);

  // Helpers used by filters, tests, methods and globals.
  Value Call(const Value& callee, CallArgs& args);
  Value ApplyFilter(std::string_view name, const Value& input, CallArgs& args);
  bool ApplyTest(std::string_view name, const Value& input, CallArgs& args);
  // Python iteration: list items, dict keys, string code points; undefined is empty.
  std::vector<Value> Iterate(const Value& value);
  // x.name / x[key] with jinja2's sandboxed lookup rules (missing -> undefined).
  Value GetAttr(const Value& object, std::string_view name);
  Value GetItem(const Value& object, const Value& key);
  // Registers a namespace() so reference cycles through it are broken after rendering.
  void TrackNamespace(const std::shared_ptr<NamespaceData>& ns);
  // Charges one step against the budget.
  void Step();
  const RenderLimits& limits() const { return limits_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // Statements (render_stmt.cc).
  Flow ExecBody(const StmtList& body, Frame& frame, std::string& out);
  Flow Exec(const Stmt& stmt, Frame& frame, std::string& out);
  Flow ExecFor(const Stmt& stmt, Frame& frame, std::string& out);
  void ExecSet(const Stmt& stmt, Frame& frame);
  void DefineMacro(const Stmt& stmt, Frame& frame);
  Value CallMacro(const Stmt& macro, CallArgs& args);
  void BindTargets(const std::vector<std::string>& targets, const Value& value, Frame& frame);
  std::string Capture(const StmtList& body, Frame& frame);
  void Append(std::string& out, std::string_view text);

  // Expressions (render_expr.cc).
  Value Eval(const Expr& expr, Frame& frame);
  Value EvalNode(const Expr& expr, Frame& frame);
  void EvalArgs(const Expr& expr, Frame& frame, CallArgs* args);
  // A filter chain; `block_input` feeds the innermost null input of {% filter %} chains.
  Value EvalFilter(const Expr& expr, Frame& frame, const Value* block_input);
  Value EvalSlice(const Expr& expr, Frame& frame);

  const TemplateAst& ast_;
  RenderLimits limits_;
  const Frame* root_ = nullptr;  // template-level scope: macros resolve names here
  uint64_t steps_ = 0;
  size_t output_bytes_ = 0;
  int call_depth_ = 0;
  int eval_depth_ = 0;  // Eval / EvalFilter calls in progress
  std::vector<std::shared_ptr<NamespaceData>> namespaces_;
};

}  // namespace radixlm::chat
