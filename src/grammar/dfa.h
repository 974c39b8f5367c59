// Byte DFA: subset construction from a Thompson NFA, then trimming and minimization.
//
// The result is complete over the 256 byte values with kDead for "no match possible". After
// BuildDfa every non-dead state is *live* — some accepting state is reachable from it — which
// is what token masks and jump-forward rely on: a token is allowed exactly when walking its
// bytes never reaches kDead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "grammar/nfa.h"
#include "util/status.h"

namespace radixlm::grammar {

class Dfa {
 public:
  static constexpr int32_t kDead = -1;

  // A DFA from a transition table (`next`: [num_states * 256], kDead or a state index;
  // `accepting`: [num_states]), for automata assembled from parts (structural_tag.h). Pass it
  // through TrimDfa (and MinimizeDfa) before use: the liveness promise above is not checked.
  static Dfa FromTable(int32_t start, std::vector<int32_t> next, std::vector<uint8_t> accepting) {
    Dfa dfa;
    dfa.start_ = start;
    dfa.next_ = std::move(next);
    dfa.accepting_ = std::move(accepting);
    return dfa;
  }

  int32_t num_states() const { return static_cast<int32_t>(accepting_.size()); }
  int32_t start() const { return start_; }
  int32_t Next(int32_t state, uint8_t byte) const { return next_[state * 256 + byte]; }
  bool IsAccepting(int32_t state) const { return accepting_[state] != 0; }
  // The state after `bytes` from `state`, or kDead.
  int32_t Walk(int32_t state, const char* bytes, size_t n) const {
    for (size_t i = 0; i < n && state != kDead; ++i) {
      state = Next(state, static_cast<uint8_t>(bytes[i]));
    }
    return state;
  }

 private:
  friend StatusOr<Dfa> BuildDfa(const Nfa& nfa, size_t max_states);
  friend Dfa MinimizeDfa(const Dfa& dfa);
  friend Dfa TrimDfa(const Dfa& dfa);

  int32_t start_ = 0;
  std::vector<int32_t> next_;       // [num_states * 256]
  std::vector<uint8_t> accepting_;  // [num_states]
};

// Subset construction, then TrimDfa and MinimizeDfa. Errors: ResourceExhausted when more than
// `max_states` subset states are needed; InvalidArgument when the language is empty.
StatusOr<Dfa> BuildDfa(const Nfa& nfa, size_t max_states);

// Removes states that cannot reach an accepting state (edges to them become kDead) and states
// unreachable from the start. The start state stays, even if dead (empty language).
Dfa TrimDfa(const Dfa& dfa);

// Moore partition refinement; expects a trimmed DFA and returns an equivalent minimal one.
Dfa MinimizeDfa(const Dfa& dfa);

}  // namespace radixlm::grammar
