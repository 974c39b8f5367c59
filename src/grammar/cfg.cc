#include "grammar/cfg.h"

namespace radixlm::grammar {

Status Cfg::Finalize() {
  const size_t n = rule_names.size();
  rule_productions.assign(n, {});
  for (size_t p = 0; p < productions.size(); ++p) {
    rule_productions[productions[p].lhs].push_back(static_cast<int32_t>(p));
  }
  // Fixed points over the productions: nullable (all symbols nullable) and productive (all
  // symbols terminal or productive). Grammars are small, so the quadratic loop is fine.
  nullable.assign(n, 0);
  std::vector<uint8_t> productive(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (const CfgProduction& p : productions) {
      bool all_nullable = true, all_productive = true;
      for (const CfgSymbol& s : p.rhs) {
        all_nullable = all_nullable && !s.is_terminal() && nullable[s.rule];
        all_productive = all_productive && (s.is_terminal() || productive[s.rule]);
      }
      if (all_nullable && !nullable[p.lhs]) nullable[p.lhs] = 1, changed = true;
      if (all_productive && !productive[p.lhs]) productive[p.lhs] = 1, changed = true;
    }
  }
  // Every rule reachable from the root must be productive, or a prefix could be accepted
  // that no completion finishes (masks and jump-forward would then lie).
  std::vector<uint8_t> reached(n, 0);
  std::vector<int32_t> stack = {root};
  reached[root] = 1;
  while (!stack.empty()) {
    const int32_t r = stack.back();
    stack.pop_back();
    if (!productive[r]) {
      return InvalidArgument("grammar rule '" + rule_names[r] +
                             "' can never finish: every alternative recurses forever");
    }
    for (int32_t p : rule_productions[r]) {
      for (const CfgSymbol& s : productions[p].rhs) {
        if (!s.is_terminal() && !reached[s.rule]) reached[s.rule] = 1, stack.push_back(s.rule);
      }
    }
  }
  return Status::Ok();
}

}  // namespace radixlm::grammar
