#include "grammar/nfa.h"

#include <string>

namespace radixlm::grammar {
namespace {

// A fragment under construction: enter at `in`, leave from `out` (which has no edges yet).
struct Fragment {
  int32_t in;
  int32_t out;
};

class Builder {
 public:
  explicit Builder(size_t max_states) : max_states_(max_states) {}

  // Returns false when the state cap was hit (the NFA is then incomplete).
  bool Build(const RegexNode& root, Nfa* out) {
    const Fragment f = Emit(root);
    if (overflow_) return false;
    nfa_.start = f.in;
    nfa_.accept = f.out;
    *out = std::move(nfa_);
    return true;
  }

 private:
  int32_t NewState() {
    if (nfa_.states.size() >= max_states_) {
      overflow_ = true;
      return 0;  // keep going harmlessly; Build reports the overflow
    }
    nfa_.states.emplace_back();
    return static_cast<int32_t>(nfa_.states.size() - 1);
  }
  void Epsilon(int32_t from, int32_t to) {
    if (!overflow_) nfa_.states[from].epsilon.push_back(to);
  }

  Fragment Emit(const RegexNode& node) {
    if (overflow_) return {0, 0};
    switch (node.kind) {
      case RegexNode::Kind::kEmpty: {
        const int32_t s = NewState();
        return {s, s};
      }
      case RegexNode::Kind::kClass: {
        const int32_t in = NewState(), out = NewState();
        for (const ByteSeq& seq : node.seqs) {
          int32_t cur = in;
          for (size_t i = 0; i < seq.size() && !overflow_; ++i) {
            const int32_t next = i + 1 == seq.size() ? out : NewState();
            if (overflow_) break;
            nfa_.states[cur].edges.push_back({seq[i].lo, seq[i].hi, next});
            cur = next;
          }
        }
        return {in, out};
      }
      case RegexNode::Kind::kConcat: {
        if (node.children.empty()) return Emit(RegexNode{});
        Fragment f = Emit(node.children[0]);
        for (size_t i = 1; i < node.children.size(); ++i) {
          const Fragment g = Emit(node.children[i]);
          Epsilon(f.out, g.in);
          f.out = g.out;
        }
        return f;
      }
      case RegexNode::Kind::kAlt: {
        const int32_t in = NewState(), out = NewState();
        for (const RegexNode& child : node.children) {
          const Fragment g = Emit(child);
          Epsilon(in, g.in);
          Epsilon(g.out, out);
        }
        return {in, out};
      }
      case RegexNode::Kind::kRepeat:
        return EmitRepeat(node.children[0], node.min, node.max);
    }
    return {0, 0};
  }

  Fragment EmitRepeat(const RegexNode& body, int32_t min, int32_t max) {
    const int32_t in = NewState();
    int32_t cur = in;
    // X{m,} is X^(m-1) X+: the last mandatory copy loops back on itself, so X+ holds one copy
    // of X (a second one would double the states of a large X in the DFA too).
    const bool unbounded = max == RegexNode::kUnbounded;
    const int32_t mandatory = unbounded && min > 0 ? min - 1 : min;
    for (int32_t i = 0; i < mandatory && !overflow_; ++i) {  // mandatory copies
      const Fragment g = Emit(body);
      Epsilon(cur, g.in);
      cur = g.out;
    }
    if (unbounded) {  // a Kleene loop (entered at least once when min > 0)
      const Fragment g = Emit(body);
      const int32_t out = NewState();
      Epsilon(cur, g.in);
      if (min == 0) Epsilon(cur, out);
      Epsilon(g.out, g.in);
      Epsilon(g.out, out);
      return {in, out};
    }
    const int32_t out = NewState();
    for (int32_t i = min; i < max && !overflow_; ++i) {  // optional copies, each may stop
      Epsilon(cur, out);
      const Fragment g = Emit(body);
      Epsilon(cur, g.in);
      cur = g.out;
    }
    Epsilon(cur, out);
    return {in, out};
  }

  size_t max_states_;
  bool overflow_ = false;
  Nfa nfa_;
};

}  // namespace

StatusOr<Nfa> BuildNfa(const RegexNode& root, size_t max_states) {
  Nfa nfa;
  if (!Builder(max_states).Build(root, &nfa)) {
    return ResourceExhausted("regex too large: its NFA exceeds " + std::to_string(max_states) +
                             " states (reduce repetition counts or alternatives)");
  }
  return nfa;
}

}  // namespace radixlm::grammar
