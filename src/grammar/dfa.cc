#include "grammar/dfa.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace radixlm::grammar {
namespace {

struct VectorHash {
  size_t operator()(const std::vector<int32_t>& v) const {
    size_t h = v.size();
    for (int32_t x : v) h = h * 1000003u ^ static_cast<size_t>(x);
    return h;
  }
};

// Epsilon closure of `set` in place; the result is sorted, so it can key the subset map.
void Closure(const Nfa& nfa, std::vector<int32_t>* set, std::vector<uint8_t>* seen) {
  std::vector<int32_t> stack = *set;
  for (int32_t s : *set) (*seen)[s] = 1;
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    for (int32_t t : nfa.states[s].epsilon) {
      if (!(*seen)[t]) {
        (*seen)[t] = 1;
        set->push_back(t);
        stack.push_back(t);
      }
    }
  }
  for (int32_t s : *set) (*seen)[s] = 0;
  std::sort(set->begin(), set->end());
}

}  // namespace

StatusOr<Dfa> BuildDfa(const Nfa& nfa, size_t max_states) {
  Dfa dfa;
  std::vector<uint8_t> seen(nfa.states.size(), 0);
  std::unordered_map<std::vector<int32_t>, int32_t, VectorHash> ids;
  std::vector<std::vector<int32_t>> subsets;

  std::vector<int32_t> start = {nfa.start};
  Closure(nfa, &start, &seen);
  ids.emplace(start, 0);
  subsets.push_back(std::move(start));

  // targets[b]: NFA states reached on byte b from the current subset (before closure).
  std::vector<std::vector<int32_t>> targets(256);
  for (size_t d = 0; d < subsets.size(); ++d) {
    for (auto& t : targets) t.clear();
    bool accepting = false;
    for (int32_t s : subsets[d]) {
      if (s == nfa.accept) accepting = true;
      for (const Nfa::Edge& e : nfa.states[s].edges) {
        for (int b = e.lo; b <= e.hi; ++b) targets[b].push_back(e.to);
      }
    }
    dfa.accepting_.push_back(accepting ? 1 : 0);
    // Neighbouring bytes usually reach the same NFA states (classes are ranges): reuse the
    // previous byte's closure instead of recomputing it.
    std::vector<int32_t> prev_raw;
    int32_t prev_id = Dfa::kDead;
    for (int b = 0; b < 256; ++b) {
      std::vector<int32_t>& set = targets[b];
      if (set.empty()) {
        dfa.next_.push_back(Dfa::kDead);
        continue;
      }
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      if (prev_id != Dfa::kDead && set == prev_raw) {
        dfa.next_.push_back(prev_id);
        continue;
      }
      prev_raw = set;
      Closure(nfa, &set, &seen);
      auto [it, inserted] = ids.emplace(set, static_cast<int32_t>(subsets.size()));
      if (inserted) {
        if (subsets.size() >= max_states) {
          return ResourceExhausted("grammar too complex: its DFA exceeds " +
                                   std::to_string(max_states) + " states");
        }
        subsets.push_back(set);
      }
      prev_id = it->second;
      dfa.next_.push_back(it->second);
    }
  }
  Dfa trimmed = TrimDfa(dfa);
  if (!trimmed.IsAccepting(trimmed.start()) && trimmed.num_states() == 1 &&
      std::all_of(trimmed.next_.begin(), trimmed.next_.end(),
                  [](int32_t t) { return t == Dfa::kDead; })) {
    return InvalidArgument("the grammar matches no string at all");
  }
  return MinimizeDfa(trimmed);
}

Dfa TrimDfa(const Dfa& dfa) {
  const int32_t n = dfa.num_states();
  // Co-reachability: walk reversed edges from the accepting states.
  std::vector<std::vector<int32_t>> reverse(n);
  for (int32_t s = 0; s < n; ++s) {
    for (int b = 0; b < 256; ++b) {
      const int32_t t = dfa.Next(s, static_cast<uint8_t>(b));
      if (t != Dfa::kDead && (reverse[t].empty() || reverse[t].back() != s)) {
        reverse[t].push_back(s);
      }
    }
  }
  std::vector<uint8_t> live(n, 0);
  std::vector<int32_t> stack;
  for (int32_t s = 0; s < n; ++s) {
    if (dfa.IsAccepting(s)) live[s] = 1, stack.push_back(s);
  }
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    for (int32_t p : reverse[s]) {
      if (!live[p]) live[p] = 1, stack.push_back(p);
    }
  }
  // Renumber live states reachable from the start, in BFS order (start = 0).
  std::vector<int32_t> remap(n, Dfa::kDead);
  std::vector<int32_t> order = {dfa.start()};
  remap[dfa.start()] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (int b = 0; b < 256; ++b) {
      const int32_t t = dfa.Next(order[i], static_cast<uint8_t>(b));
      if (t != Dfa::kDead && live[t] && remap[t] == Dfa::kDead) {
        remap[t] = static_cast<int32_t>(order.size());
        order.push_back(t);
      }
    }
  }
  Dfa out;
  out.start_ = 0;
  for (int32_t s : order) {
    out.accepting_.push_back(dfa.accepting_[s]);
    for (int b = 0; b < 256; ++b) {
      const int32_t t = dfa.Next(s, static_cast<uint8_t>(b));
      out.next_.push_back(t == Dfa::kDead || !live[t] ? Dfa::kDead : remap[t]);
    }
  }
  return out;
}

Dfa MinimizeDfa(const Dfa& dfa) {
  const int32_t n = dfa.num_states();
  // Bytes whose transitions agree in every state are one input symbol: grammar automata use a
  // few dozen such byte classes, so each signature below is that long, not 256.
  std::vector<int> symbol_bytes;  // one byte of each class
  {
    std::unordered_map<std::vector<int32_t>, int, VectorHash> columns;
    std::vector<int32_t> column(n);
    for (int b = 0; b < 256; ++b) {
      for (int32_t s = 0; s < n; ++s) column[s] = dfa.Next(s, static_cast<uint8_t>(b));
      if (columns.emplace(column, b).second) symbol_bytes.push_back(b);
    }
  }
  const size_t symbols = symbol_bytes.size();
  std::vector<int32_t> compact(static_cast<size_t>(n) * symbols);  // [state][symbol]
  for (int32_t s = 0; s < n; ++s) {
    for (size_t k = 0; k < symbols; ++k) {
      compact[s * symbols + k] = dfa.Next(s, static_cast<uint8_t>(symbol_bytes[k]));
    }
  }
  // Moore: start from {accepting, non-accepting}, split classes by the classes of successors
  // until stable. A state's signature is its class and its successors' classes; each round
  // hashes them into an open-addressing table of states, O(n * symbols).
  const size_t width = symbols + 1;
  std::vector<int32_t> cls(n);
  for (int32_t s = 0; s < n; ++s) cls[s] = dfa.IsAccepting(s) ? 1 : 0;
  std::vector<int32_t> sigs(static_cast<size_t>(n) * width);
  size_t slots = 1;
  while (slots < 2 * static_cast<size_t>(n)) slots *= 2;
  std::vector<int32_t> table(slots);  // a state whose signature names its class, or -1
  std::vector<int32_t> next_cls(n);
  int32_t num_classes = 0;
  while (true) {
    std::fill(table.begin(), table.end(), -1);
    int32_t count = 0;
    for (int32_t s = 0; s < n; ++s) {
      int32_t* sig = &sigs[s * width];
      sig[0] = cls[s];
      const int32_t* succ = &compact[s * symbols];
      uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint32_t>(cls[s]);
      for (size_t k = 0; k < symbols; ++k) {
        sig[k + 1] = succ[k] == Dfa::kDead ? -1 : cls[succ[k]];
        h = (h ^ static_cast<uint32_t>(sig[k + 1])) * 0x100000001b3ull;
      }
      // The first state with this signature names the class (in state order: deterministic).
      for (size_t slot = (h ^ (h >> 29)) & (slots - 1);; slot = (slot + 1) & (slots - 1)) {
        const int32_t other = table[slot];
        if (other < 0) {
          table[slot] = s;
          next_cls[s] = count++;
          break;
        }
        if (std::equal(sig, sig + width, &sigs[other * width])) {
          next_cls[s] = next_cls[other];
          break;
        }
      }
    }
    cls.swap(next_cls);
    if (count == num_classes) break;
    num_classes = count;
  }
  // Number classes in first-seen order from the start state so the result is deterministic.
  std::vector<int32_t> class_id(num_classes, -1);
  std::vector<int32_t> representative;
  auto id_of = [&](int32_t s) {
    if (class_id[cls[s]] < 0) {
      class_id[cls[s]] = static_cast<int32_t>(representative.size());
      representative.push_back(s);
    }
    return class_id[cls[s]];
  };
  id_of(dfa.start());
  Dfa out;
  out.start_ = 0;
  for (size_t i = 0; i < representative.size(); ++i) {
    const int32_t s = representative[i];
    out.accepting_.push_back(dfa.accepting_[s]);
    for (int b = 0; b < 256; ++b) {
      const int32_t t = dfa.Next(s, static_cast<uint8_t>(b));
      out.next_.push_back(t == Dfa::kDead ? Dfa::kDead : id_of(t));
    }
  }
  return out;
}

}  // namespace radixlm::grammar
