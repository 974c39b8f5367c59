// Cfg: a context-free grammar over bytes, the compiled form of an EBNF grammar.
//
// Terminals are byte ranges; everything richer (string literals, UTF-8 character classes,
// groups, repetition) is lowered by the EBNF parser into plain productions, so the Earley
// recognizer only knows "byte in [lo, hi]" and "rule".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace radixlm::grammar {

struct CfgSymbol {
  // rule >= 0: a nonterminal; rule == kTerminal: a byte in [lo, hi].
  static constexpr int32_t kTerminal = -1;
  int32_t rule = kTerminal;
  uint8_t lo = 0;
  uint8_t hi = 0;

  bool is_terminal() const { return rule == kTerminal; }
};

struct CfgProduction {
  int32_t lhs = 0;
  std::vector<CfgSymbol> rhs;
};

struct Cfg {
  std::vector<std::string> rule_names;  // [rules]; helper rules are named "a#3"
  std::vector<CfgProduction> productions;
  std::vector<std::vector<int32_t>> rule_productions;  // [rules] → production ids
  std::vector<uint8_t> nullable;                       // [rules]: derives the empty string
  int32_t root = 0;

  // Fills rule_productions and nullable, and checks that every rule reachable from the root
  // can finish (derives some string); a rule that only recurses forever is InvalidArgument.
  Status Finalize();
};

}  // namespace radixlm::grammar
