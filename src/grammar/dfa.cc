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
  // Bytes whose transitions agree in every state are one input symbol (grammar automata use a
  // few dozen). Bytes are grouped by a hash of their column, then every byte's column is
  // compared with its group's first byte row by row; on a hash collision (a mismatch) every
  // byte is a symbol of its own.
  std::vector<int> symbol_bytes;  // one byte of each class
  {
    std::vector<uint64_t> hash(256, 0xcbf29ce484222325ull);
    for (int32_t s = 0; s < n; ++s) {
      for (int b = 0; b < 256; ++b) {
        hash[b] = (hash[b] ^ static_cast<uint32_t>(dfa.Next(s, static_cast<uint8_t>(b)))) *
                  0x100000001b3ull;
      }
    }
    std::vector<int> rep(256);
    for (int b = 0; b < 256; ++b) {
      rep[b] = b;
      for (int c : symbol_bytes) {
        if (hash[c] == hash[b]) rep[b] = c;
      }
      if (rep[b] == b) symbol_bytes.push_back(b);
    }
    bool collision = false;
    for (int32_t s = 0; s < n && !collision; ++s) {
      for (int b = 0; b < 256; ++b) {
        collision |= dfa.Next(s, static_cast<uint8_t>(b)) !=
                     dfa.Next(s, static_cast<uint8_t>(rep[b]));
      }
    }
    if (collision) {
      symbol_bytes.resize(256);
      for (int b = 0; b < 256; ++b) symbol_bytes[b] = b;
    }
  }
  // Hopcroft's partition refinement over states 0..n-1 plus a sink n standing for kDead. The
  // sink starts in a block of its own, so a state is never merged with "dead" (as when dead is
  // a class distinct from every state), then blocks split until no (block, symbol) pair splits
  // another: O(symbols * n log n).
  const int32_t k = static_cast<int32_t>(symbol_bytes.size());
  const int32_t sink = n, m = n + 1;
  auto target = [&](int32_t s, int32_t a) {
    const int32_t t = s == sink ? Dfa::kDead : dfa.Next(s, static_cast<uint8_t>(symbol_bytes[a]));
    return t == Dfa::kDead ? sink : t;
  };
  // Predecessors by (target, symbol), as one CSR array.
  std::vector<int32_t> pred_start(static_cast<size_t>(m) * k + 1, 0);
  for (int32_t s = 0; s < m; ++s) {
    for (int32_t a = 0; a < k; ++a) ++pred_start[static_cast<size_t>(target(s, a)) * k + a + 1];
  }
  for (size_t i = 1; i < pred_start.size(); ++i) pred_start[i] += pred_start[i - 1];
  std::vector<int32_t> preds(pred_start.back());
  {
    std::vector<int32_t> fill(pred_start.begin(), pred_start.end() - 1);
    for (int32_t s = 0; s < m; ++s) {
      for (int32_t a = 0; a < k; ++a) preds[fill[static_cast<size_t>(target(s, a)) * k + a]++] = s;
    }
  }
  // Blocks are ranges [first, end) of `elems`; pos is each state's index there.
  std::vector<int32_t> elems, pos(m), block_of(m), first, end, marked;
  for (int initial = 0; initial < 3; ++initial) {  // non-accepting, accepting, the sink
    const int32_t begin = static_cast<int32_t>(elems.size());
    for (int32_t s = 0; s < m; ++s) {
      const int kind = s == sink ? 2 : dfa.IsAccepting(s) ? 1 : 0;
      if (kind != initial) continue;
      pos[s] = static_cast<int32_t>(elems.size());
      block_of[s] = static_cast<int32_t>(first.size());
      elems.push_back(s);
    }
    if (static_cast<int32_t>(elems.size()) == begin) continue;
    first.push_back(begin);
    end.push_back(static_cast<int32_t>(elems.size()));
    marked.push_back(0);
  }
  std::vector<uint8_t> queued(static_cast<size_t>(m) * k, 0);  // (block, symbol) waiting
  std::vector<std::pair<int32_t, int32_t>> work;
  auto enqueue = [&](int32_t block, int32_t a) {
    queued[static_cast<size_t>(block) * k + a] = 1;
    work.emplace_back(block, a);
  };
  for (int32_t b = 0; b < static_cast<int32_t>(first.size()); ++b) {
    for (int32_t a = 0; a < k; ++a) enqueue(b, a);
  }
  std::vector<int32_t> splitters, touched;
  while (!work.empty()) {
    const auto [block, a] = work.back();
    work.pop_back();
    queued[static_cast<size_t>(block) * k + a] = 0;
    splitters.clear();  // the states whose symbol-a successor is in `block`
    for (int32_t i = first[block]; i < end[block]; ++i) {
      const size_t key = static_cast<size_t>(elems[i]) * k + a;
      splitters.insert(splitters.end(), preds.begin() + pred_start[key],
                       preds.begin() + pred_start[key + 1]);
    }
    for (int32_t s : splitters) {  // move s into its block's marked prefix
      const int32_t y = block_of[s];
      const int32_t slot = first[y] + marked[y];
      const int32_t other = elems[slot];
      std::swap(elems[pos[s]], elems[slot]);
      std::swap(pos[s], pos[other]);
      if (marked[y]++ == 0) touched.push_back(y);
    }
    for (int32_t y : touched) {
      if (marked[y] < end[y] - first[y]) {  // split off the marked prefix as block z
        const int32_t z = static_cast<int32_t>(first.size());
        first.push_back(first[y]);
        end.push_back(first[y] + marked[y]);
        marked.push_back(0);
        first[y] = end[z];
        for (int32_t i = first[z]; i < end[z]; ++i) block_of[elems[i]] = z;
        const bool z_smaller = end[z] - first[z] <= end[y] - first[y];
        for (int32_t c = 0; c < k; ++c) {
          if (queued[static_cast<size_t>(y) * k + c]) {
            enqueue(z, c);
          } else {
            enqueue(z_smaller ? z : y, c);
          }
        }
      }
      marked[y] = 0;
    }
    touched.clear();
  }
  const int32_t num_classes = static_cast<int32_t>(first.size());
  const std::vector<int32_t>& cls = block_of;
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
