// Statement execution: output, if, for (with loop.*), set, macros, filter/with blocks.
#include <memory>

#include "chat/renderer.h"
#include "chat/template_error.h"

namespace radixlm::chat {

const Value* Frame::Lookup(std::string_view name) const {
  for (const Frame* frame = this; frame != nullptr; frame = frame->parent_) {
    for (const auto& var : frame->vars_) {
      if (var.first == name) return &var.second;
    }
  }
  return nullptr;
}

void Frame::Set(const std::string& name, Value value) {
  for (auto& var : vars_) {
    if (var.first == name) {
      var.second = std::move(value);
      return;
    }
  }
  vars_.emplace_back(name, std::move(value));
}

Renderer::~Renderer() {
  // A namespace may hold itself (ns.self = ns); clearing breaks every such cycle.
  for (const auto& ns : namespaces_) ns->attrs.clear();
}

void Renderer::TrackNamespace(const std::shared_ptr<NamespaceData>& ns) {
  namespaces_.push_back(ns);
}

void Renderer::Step() {
  if (++steps_ > limits_.max_steps) {
    throw TemplateError(ErrorKind::kLimit, "the template ran more than " +
                                               std::to_string(limits_.max_steps) + " steps");
  }
}

void Renderer::Append(std::string& out, std::string_view text) {
  output_bytes_ += text.size();
  if (output_bytes_ > limits_.max_output_bytes) {
    throw TemplateError(ErrorKind::kLimit, "output larger than " +
                                               std::to_string(limits_.max_output_bytes) + " bytes");
  }
  out.append(text);
}

std::string Renderer::Render(const Frame& globals) {
  Frame root(&globals);
  root_ = &root;
  std::string out;
  ExecBody(ast_.body, root, out);
  root_ = nullptr;
  return out;
}

Renderer::Flow Renderer::ExecBody(const StmtList& body, Frame& frame, std::string& out) {
  for (const auto& stmt : body) {
    const Flow flow = Exec(*stmt, frame, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

std::string Renderer::Capture(const StmtList& body, Frame& frame) {
  std::string captured;
  Frame scope(&frame);
  ExecBody(body, scope, captured);
  return captured;
}

Renderer::Flow Renderer::Exec(const Stmt& stmt, Frame& frame, std::string& out) {
  Step();
  try {
    switch (stmt.kind) {
      case StmtKind::kText:
        Append(out, stmt.text);
        return Flow::kNormal;
      case StmtKind::kOutput: {
        const Value value = Eval(*stmt.expr, frame);
        Append(out, value.Str());
        return Flow::kNormal;
      }
      case StmtKind::kIf:
        for (const IfBranch& branch : stmt.branches) {
          if (Eval(*branch.condition, frame).Truthy()) return ExecBody(branch.body, frame, out);
        }
        return ExecBody(stmt.else_body, frame, out);
      case StmtKind::kFor:
        return ExecFor(stmt, frame, out);
      case StmtKind::kSet:
      case StmtKind::kSetAttr:
      case StmtKind::kSetBlock:
        ExecSet(stmt, frame);
        return Flow::kNormal;
      case StmtKind::kMacro:
        DefineMacro(stmt, frame);
        return Flow::kNormal;
      case StmtKind::kBreak:
        return Flow::kBreak;
      case StmtKind::kContinue:
        return Flow::kContinue;
      case StmtKind::kFilterBlock: {
        const Value text = Value::String(Capture(stmt.body, frame));
        Append(out, EvalFilter(*stmt.expr, frame, &text).Str());
        return Flow::kNormal;
      }
      case StmtKind::kWith: {
        Frame scope(&frame);
        for (size_t i = 0; i < stmt.targets.size(); ++i) {
          scope.Set(stmt.targets[i], Eval(*stmt.values[i], scope));
        }
        return ExecBody(stmt.body, scope, out);
      }
      case StmtKind::kScope: {
        Frame scope(&frame);
        return ExecBody(stmt.body, scope, out);
      }
    }
  } catch (TemplateError& e) {
    if (!e.has_position()) e.set_position(stmt.line, stmt.column);
    throw;
  }
  return Flow::kNormal;
}

void Renderer::BindTargets(const std::vector<std::string>& targets, const Value& value,
                           Frame& frame) {
  if (targets.size() == 1) {
    frame.Set(targets[0], value);
    return;
  }
  if (value.is_undefined()) {
    throw TemplateError(ErrorKind::kUndefined, value.undefined_hint());
  }
  std::vector<Value> items = Iterate(value);
  if (items.size() != targets.size()) {
    ThrowTypeError(items.size() > targets.size()
                       ? "too many values to unpack (expected " + std::to_string(targets.size()) +
                             ")"
                       : "not enough values to unpack (expected " + std::to_string(targets.size()) +
                             ", got " + std::to_string(items.size()) + ")");
  }
  for (size_t i = 0; i < targets.size(); ++i) frame.Set(targets[i], std::move(items[i]));
}

namespace {

// The keys of jinja2's `loop` object, built once and shared (Values are immutable).
struct LoopKeys {
  Value index = Value::String("index");
  Value index0 = Value::String("index0");
  Value revindex = Value::String("revindex");
  Value revindex0 = Value::String("revindex0");
  Value first = Value::String("first");
  Value last = Value::String("last");
  Value length = Value::String("length");
  Value depth = Value::String("depth");
  Value depth0 = Value::String("depth0");
  Value previtem = Value::String("previtem");
  Value nextitem = Value::String("nextitem");
  Value cycle = Value::String("cycle");
};

// jinja2's `loop` object for iteration `index` of `items`; `cycle` is the loop's cycler.
Value MakeLoop(const std::vector<Value>& items, size_t index, const Value& cycle) {
  static const LoopKeys* const keys = new LoopKeys();
  const int64_t n = static_cast<int64_t>(items.size());
  const int64_t i = static_cast<int64_t>(index);
  DictData loop;
  loop.Reserve(12);
  loop.Append(keys->index, Value::Int(i + 1));
  loop.Append(keys->index0, Value::Int(i));
  loop.Append(keys->revindex, Value::Int(n - i));
  loop.Append(keys->revindex0, Value::Int(n - i - 1));
  loop.Append(keys->first, Value::Bool(i == 0));
  loop.Append(keys->last, Value::Bool(i == n - 1));
  loop.Append(keys->length, Value::Int(n));
  loop.Append(keys->depth, Value::Int(1));
  loop.Append(keys->depth0, Value::Int(0));
  if (i > 0) loop.Append(keys->previtem, items[index - 1]);
  if (i + 1 < n) loop.Append(keys->nextitem, items[index + 1]);
  loop.Append(keys->cycle, cycle);
  return Value::MakeDict(std::move(loop));
}

// loop.cycle(a, b, ...): the argument at the current iteration, round robin. One callable per
// loop reads the iteration from `position`, which ExecFor advances.
Value MakeCycle(std::shared_ptr<size_t> position) {
  return Value::Function("cycle", [position](Renderer&, CallArgs& args) -> Value {
    if (args.positional.empty()) ThrowTypeError("no items for cycling given");
    return args.positional[*position % args.positional.size()];
  });
}

}  // namespace

Renderer::Flow Renderer::ExecFor(const Stmt& stmt, Frame& frame, std::string& out) {
  std::vector<Value> items = Iterate(Eval(*stmt.expr, frame));
  if (stmt.condition) {
    std::vector<Value> kept;
    for (Value& item : items) {
      Frame scope(&frame);
      BindTargets(stmt.targets, item, scope);
      if (Eval(*stmt.condition, scope).Truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  auto position = std::make_shared<size_t>(0);
  const Value cycle = MakeCycle(position);
  for (size_t i = 0; i < items.size(); ++i) {
    Step();
    *position = i;
    Frame scope(&frame);
    BindTargets(stmt.targets, items[i], scope);
    scope.Set("loop", MakeLoop(items, i, cycle));
    if (ExecBody(stmt.body, scope, out) == Flow::kBreak) break;
  }
  if (items.empty()) {
    Frame scope(&frame);
    return ExecBody(stmt.else_body, scope, out);
  }
  return Flow::kNormal;
}

void Renderer::ExecSet(const Stmt& stmt, Frame& frame) {
  if (stmt.kind == StmtKind::kSetBlock) {
    Value text = Value::String(Capture(stmt.body, frame));
    if (stmt.expr) text = EvalFilter(*stmt.expr, frame, &text);
    frame.Set(stmt.targets[0], std::move(text));
    return;
  }
  Value value = Eval(*stmt.expr, frame);
  if (stmt.kind == StmtKind::kSet) {
    BindTargets(stmt.targets, value, frame);
    return;
  }
  const Value* ns = frame.Lookup(stmt.targets[0]);
  if (ns == nullptr || !ns->is_namespace()) {
    throw TemplateError(ErrorKind::kType, "cannot assign attribute on non-namespace object");
  }
  ns->as_namespace().Set(stmt.targets[1], std::move(value));
}

void Renderer::DefineMacro(const Stmt& stmt, Frame& frame) {
  const Stmt* macro = &stmt;
  frame.Set(stmt.name, Value::Function(stmt.name, [macro](Renderer& r, CallArgs& args) {
              return r.CallMacro(*macro, args);
            }));
}

Value Renderer::CallMacro(const Stmt& macro, CallArgs& args) {
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    throw TemplateError(ErrorKind::kLimit,
                        "macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
  }
  const size_t n = macro.targets.size();
  if (args.positional.size() > n) {
    --call_depth_;
    ThrowTypeError("macro '" + macro.name + "' takes not more than " + std::to_string(n) +
                   " argument(s)");
  }
  Frame scope(root_);
  std::vector<bool> bound(n, false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    scope.Set(macro.targets[i], args.positional[i]);
    bound[i] = true;
  }
  for (auto& [key, value] : args.keyword) {
    size_t i = 0;
    while (i < n && macro.targets[i] != key) ++i;
    if (i == n || bound[i]) {
      --call_depth_;
      ThrowTypeError("macro '" + macro.name + "' got an unexpected or duplicate argument '" + key +
                     "'");
    }
    scope.Set(key, value);
    bound[i] = true;
  }
  std::string out;
  try {
    for (size_t i = 0; i < n; ++i) {
      if (bound[i]) continue;
      scope.Set(macro.targets[i],
                macro.values[i]
                    ? Eval(*macro.values[i], scope)
                    : Value::Undefined("parameter '" + macro.targets[i] + "' was not provided"));
    }
    ExecBody(macro.body, scope, out);
  } catch (...) {
    --call_depth_;
    throw;
  }
  --call_depth_;
  return Value::String(std::move(out));
}

}  // namespace radixlm::chat
