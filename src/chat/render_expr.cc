// Expression evaluation and jinja2's lookup rules for attributes, items and slices.
#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/renderer.h"
#include "chat/template_error.h"
#include "chat/text.h"

namespace radixlm::chat {

namespace {

[[noreturn]] void ThrowUndefined(const Value& undefined) {
  throw TemplateError(ErrorKind::kUndefined, undefined.undefined_hint().empty()
                                                 ? "value is undefined"
                                                 : undefined.undefined_hint());
}

// jinja2's object_type_repr: "'dict object'", "'None'".
std::string ObjectRepr(const Value& v) {
  return v.is_none() ? "'None'" : "'" + v.TypeName() + " object'";
}

// Python's slice.indices(): the positions a[start:stop:step] visits.
std::vector<size_t> SliceIndices(int64_t n, const Value& start_v, const Value& stop_v,
                                 const Value& step_v) {
  auto bound = [](const Value& v, const char* what) -> const Value* {
    if (v.is_none() || v.is_undefined()) return nullptr;
    if (!v.is_integral()) {
      ThrowTypeError(std::string("slice ") + what + " must be an integer or None");
    }
    return &v;
  };
  const Value* start_p = bound(start_v, "start");
  const Value* stop_p = bound(stop_v, "stop");
  const Value* step_p = bound(step_v, "step");
  const int64_t step = step_p ? step_p->ToInt() : 1;
  if (step == 0) ThrowTypeError("slice step cannot be zero");
  auto clamp = [&](const Value* v, int64_t fallback) {
    if (v == nullptr) return fallback;
    int64_t i = v->ToInt();
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  const int64_t start = clamp(start_p, step < 0 ? n - 1 : 0);
  const int64_t stop = clamp(stop_p, step < 0 ? -1 : n);
  std::vector<size_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

}  // namespace

namespace {

// Counts one level of expression evaluation in `*depth` while it lives.
class EvalDepth {
 public:
  EvalDepth(int* depth, const Expr& at) : depth_(depth) {
    if (*depth_ >= Renderer::kMaxEvalDepth) {
      throw TemplateError(
          ErrorKind::kLimit,
          "expression nested deeper than " + std::to_string(Renderer::kMaxEvalDepth) + " levels",
          at.line, at.column);
    }
    ++*depth_;
  }
  ~EvalDepth() { --*depth_; }
  EvalDepth(const EvalDepth&) = delete;
  EvalDepth& operator=(const EvalDepth&) = delete;

 private:
  int* depth_;
};

}  // namespace

Value Renderer::Eval(const Expr& expr, Frame& frame) {
  Step();
  EvalDepth depth(&eval_depth_, expr);
  try {
    return EvalNode(expr, frame);
  } catch (TemplateError& e) {
    if (!e.has_position()) e.set_position(expr.line, expr.column);
    throw;
  }
}

void Renderer::EvalArgs(const Expr& expr, Frame& frame, CallArgs* args) {
  for (const auto& arg : expr.args) args->positional.push_back(Eval(*arg, frame));
  for (const auto& [key, arg] : expr.kwargs) args->keyword.emplace_back(key, Eval(*arg, frame));
}

Value Renderer::EvalNode(const Expr& expr, Frame& frame) {
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return expr.literal;
    case ExprKind::kName: {
      const Value* value = frame.Lookup(expr.name);
      return value ? *value : Value::Undefined("'" + expr.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      Value::List items;
      items.reserve(expr.operands.size());
      for (const auto& item : expr.operands) items.push_back(Eval(*item, frame));
      return expr.kind == ExprKind::kTuple ? Value::MakeTuple(std::move(items))
                                           : Value::MakeList(std::move(items));
    }
    case ExprKind::kDict: {
      DictData dict;
      for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
        Value key = Eval(*expr.operands[i], frame);
        if ((key.is_list() && !key.is_tuple()) || key.is_dict() || key.is_undefined()) {
          ThrowTypeError("unhashable type: '" + key.TypeName() + "'");
        }
        dict.Set(std::move(key), Eval(*expr.operands[i + 1], frame));
      }
      return Value::MakeDict(std::move(dict));
    }
    case ExprKind::kGetAttr:
      return GetAttr(Eval(*expr.operands[0], frame), expr.name);
    case ExprKind::kGetItem:
      return GetItem(Eval(*expr.operands[0], frame), Eval(*expr.operands[1], frame));
    case ExprKind::kSlice:
      return EvalSlice(expr, frame);
    case ExprKind::kCall: {
      const Value callee = Eval(*expr.operands[0], frame);
      CallArgs args;
      EvalArgs(expr, frame, &args);
      return Call(callee, args);
    }
    case ExprKind::kFilter:
      return EvalFilter(expr, frame, nullptr);
    case ExprKind::kTest: {
      const Value input = Eval(*expr.operands[0], frame);
      CallArgs args;
      EvalArgs(expr, frame, &args);
      return Value::Bool(ApplyTest(expr.name, input, args) != expr.negated);
    }
    case ExprKind::kNeg:
    case ExprKind::kPos:
      return UnaryOperation(expr.kind == ExprKind::kNeg, Eval(*expr.operands[0], frame));
    case ExprKind::kNot:
      return Value::Bool(!Eval(*expr.operands[0], frame).Truthy());
    case ExprKind::kBinary:
      return BinaryOperation(expr.binary_op, Eval(*expr.operands[0], frame),
                             Eval(*expr.operands[1], frame));
    case ExprKind::kConcat: {
      std::string text;
      for (const auto& part : expr.operands) {
        text += Eval(*part, frame).Str();
        CheckBuiltSize(text.size());
      }
      return Value::String(std::move(text));
    }
    case ExprKind::kCompare: {
      Value left = Eval(*expr.operands[0], frame);
      for (size_t i = 0; i < expr.compare_ops.size(); ++i) {
        Value right = Eval(*expr.operands[i + 1], frame);
        if (!CompareValues(expr.compare_ops[i], left, right)) return Value::Bool(false);
        left = std::move(right);
      }
      return Value::Bool(true);
    }
    case ExprKind::kAnd: {
      Value left = Eval(*expr.operands[0], frame);
      return left.Truthy() ? Eval(*expr.operands[1], frame) : left;
    }
    case ExprKind::kOr: {
      Value left = Eval(*expr.operands[0], frame);
      return left.Truthy() ? left : Eval(*expr.operands[1], frame);
    }
    case ExprKind::kCond:
      if (Eval(*expr.operands[1], frame).Truthy()) return Eval(*expr.operands[0], frame);
      if (expr.operands[2]) return Eval(*expr.operands[2], frame);
      return Value::Undefined("the inline if-expression on line " + std::to_string(expr.line) +
                              " evaluated to false and no else section was defined.");
  }
  return Value();
}

Value Renderer::EvalFilter(const Expr& expr, Frame& frame, const Value* block_input) {
  EvalDepth depth(&eval_depth_, expr);
  Value input;
  const Expr* inner = expr.operands[0].get();
  if (inner != nullptr && inner->kind == ExprKind::kFilter && block_input != nullptr) {
    input = EvalFilter(*inner, frame, block_input);  // {% filter a|b %}: the block feeds a
  } else if (inner != nullptr) {
    input = Eval(*inner, frame);
  } else if (block_input != nullptr) {
    input = *block_input;
  }
  CallArgs args;
  EvalArgs(expr, frame, &args);
  try {
    return ApplyFilter(expr.name, input, args);
  } catch (TemplateError& e) {
    if (!e.has_position()) e.set_position(expr.line, expr.column);
    throw;
  }
}

Value Renderer::EvalSlice(const Expr& expr, Frame& frame) {
  const Value object = Eval(*expr.operands[0], frame);
  Value bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (expr.operands[i + 1]) bounds[i] = Eval(*expr.operands[i + 1], frame);
  }
  if (object.is_undefined()) ThrowUndefined(object);
  if (object.is_list()) {
    const Value::List& items = object.as_list();
    Value::List out;
    for (size_t i :
         SliceIndices(static_cast<int64_t>(items.size()), bounds[0], bounds[1], bounds[2])) {
      out.push_back(items[i]);
    }
    return Value::MakeList(std::move(out));
  }
  if (object.is_string()) {
    const std::string& s = object.as_string();
    const bool ascii = IsAscii(s);
    const std::vector<size_t> offsets = ascii ? std::vector<size_t>() : CodePointOffsets(s);
    const int64_t n = static_cast<int64_t>(ascii ? s.size() : offsets.size() - 1);
    std::string out;
    for (size_t i : SliceIndices(n, bounds[0], bounds[1], bounds[2])) {
      if (ascii) {
        out.push_back(s[i]);
      } else {
        out.append(s, offsets[i], offsets[i + 1] - offsets[i]);
      }
    }
    return Value::String(std::move(out));
  }
  return Value::Undefined(ObjectRepr(object) + " has no attribute '__getitem__'");
}

Value Renderer::Call(const Value& callee, CallArgs& args) {
  if (callee.is_callable()) return callee.as_callable().fn(*this, args);
  if (callee.is_undefined()) ThrowUndefined(callee);
  ThrowTypeError("'" + callee.TypeName() + "' object is not callable");
}

Value Renderer::ApplyFilter(std::string_view name, const Value& input, CallArgs& args) {
  FilterFn filter = FindFilter(name);
  if (filter == nullptr) filter = FindSequenceFilter(name);
  if (filter == nullptr) {
    throw TemplateError(ErrorKind::kType, "No filter named '" + std::string(name) + "'.");
  }
  return filter(*this, input, args);
}

bool Renderer::ApplyTest(std::string_view name, const Value& input, CallArgs& args) {
  TestFn test = FindTest(name);
  if (test == nullptr) {
    throw TemplateError(ErrorKind::kType, "No test named '" + std::string(name) + "'.");
  }
  return test(*this, input, args);
}

std::vector<Value> Renderer::Iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return {};
    case Value::Kind::kList:
      return value.as_list();
    case Value::Kind::kDict: {
      std::vector<Value> keys;
      keys.reserve(value.as_dict().size());
      for (const auto& entry : value.as_dict().entries()) keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      const std::string& s = value.as_string();
      for (size_t pos = 0; pos < s.size();) {
        const size_t start = pos;
        NextCodePoint(s, &pos);
        chars.push_back(Value::String(s.substr(start, pos - start)));
      }
      return chars;
    }
    default:
      ThrowTypeError("'" + value.TypeName() + "' object is not iterable");
  }
}

Value Renderer::GetAttr(const Value& object, std::string_view name) {
  if (object.is_undefined()) ThrowUndefined(object);
  Value method;
  if (FindMethod(object, name, &method)) return method;
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().FindString(name)) return *v;
  } else if (object.is_namespace()) {
    if (const Value* v = object.as_namespace().Find(name)) return *v;
  }
  return Value::Undefined(ObjectRepr(object) + " has no attribute '" + std::string(name) + "'");
}

Value Renderer::GetItem(const Value& object, const Value& key) {
  if (object.is_undefined()) ThrowUndefined(object);
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().Find(key)) return *v;
  } else if ((object.is_list() || object.is_string()) && key.is_integral()) {
    const bool is_list = object.is_list();
    const std::string* s = is_list ? nullptr : &object.as_string();
    const bool ascii = !is_list && IsAscii(*s);
    const int64_t n = static_cast<int64_t>(is_list ? object.as_list().size()
                                           : ascii ? s->size()
                                                   : CodePointCount(*s));
    int64_t i = key.ToInt();
    if (i < 0) i += n;
    if (i >= 0 && i < n) {
      if (is_list) return object.as_list()[static_cast<size_t>(i)];
      if (ascii) return Value::String(std::string(1, (*s)[static_cast<size_t>(i)]));
      const std::vector<size_t> offsets = CodePointOffsets(*s);
      return Value::String(s->substr(offsets[i], offsets[i + 1] - offsets[i]));
    }
    return Value::Undefined(ObjectRepr(object) + " has no element " + std::to_string(key.ToInt()));
  }
  if (key.is_string()) {  // jinja2 falls back to getattr for string keys
    Value method;
    if (FindMethod(object, key.as_string(), &method)) return method;
    if (object.is_namespace()) {
      if (const Value* v = object.as_namespace().Find(key.as_string())) return *v;
    }
    return Value::Undefined(ObjectRepr(object) + " has no attribute '" + key.as_string() + "'");
  }
  return Value::Undefined(ObjectRepr(object) + " has no element " + key.Repr());
}

}  // namespace radixlm::chat
