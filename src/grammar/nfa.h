// Thompson NFA over bytes, built from a RegexNode.
//
// One start and one accepting state; edges are epsilon moves or byte ranges. {m,n} repetitions
// are expanded into copies, so the state count is bounded by `max_states` and exceeding it is a
// ResourceExhausted error rather than unbounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "grammar/regex_ast.h"
#include "util/status.h"

namespace radixlm::grammar {

struct Nfa {
  struct Edge {
    uint8_t lo;
    uint8_t hi;  // inclusive
    int32_t to;
  };
  struct State {
    std::vector<int32_t> epsilon;
    std::vector<Edge> edges;
  };
  std::vector<State> states;
  int32_t start = 0;
  int32_t accept = 0;
};

StatusOr<Nfa> BuildNfa(const RegexNode& root, size_t max_states);

}  // namespace radixlm::grammar
