#include "grammar/stop_regex.h"

#include "grammar/nfa.h"
#include "grammar/regex_parser.h"

namespace radixlm::grammar {

StatusOr<std::shared_ptr<const Dfa>> CompileStopRegex(std::string_view pattern) {
  RADIXLM_ASSIGN_OR_RETURN(RegexNode ast, ParseRegex(pattern));
  RADIXLM_ASSIGN_OR_RETURN(Nfa nfa, BuildNfa(ast, kStopRegexMaxNfaStates));
  RADIXLM_ASSIGN_OR_RETURN(Dfa dfa, BuildDfa(nfa, kStopRegexMaxDfaStates));
  return std::make_shared<const Dfa>(std::move(dfa));
}

std::optional<size_t> StopRegexSearch::Feed(std::string_view bytes) {
  const Dfa& dfa = *dfa_;
  if (seen_.empty()) seen_.assign(dfa.num_states(), 0);
  if (size_ == 0 && !bytes.empty() && dfa.IsAccepting(dfa.start())) return 0;
  for (const char ch : bytes) {
    const auto byte = static_cast<uint8_t>(ch);
    // A run may start at this byte; runs are kept in start order, so it goes last.
    runs_.emplace_back(size_, dfa.start());
    size_t kept = 0;
    std::optional<size_t> match;
    for (const auto& [start, state] : runs_) {
      const int32_t next = dfa.Next(state, byte);
      if (next == Dfa::kDead || seen_[next]) continue;  // dead, or an earlier run is there
      seen_[next] = 1;
      runs_[kept++] = {start, next};
      if (!match.has_value() && dfa.IsAccepting(next)) match = start;
    }
    runs_.resize(kept);
    for (const auto& run : runs_) seen_[run.second] = 0;
    ++size_;
    if (match.has_value()) return match;
  }
  return std::nullopt;
}

}  // namespace radixlm::grammar
