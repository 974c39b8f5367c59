#include "frontend/select_methods.h"

#include <limits>
#include <numeric>

namespace radixlm::frontend {
namespace {

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

size_t ArgMax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

size_t GreedyToken(const std::vector<std::vector<double>>& lp) {
  size_t max_len = 0;
  for (const auto& o : lp) max_len = std::max(max_len, o.size());
  std::vector<size_t> remaining(lp.size());
  std::iota(remaining.begin(), remaining.end(), 0);
  for (size_t j = 0; j < max_len && remaining.size() > 1; ++j) {
    auto at = [&](size_t i) { return j < lp[i].size() ? lp[i][j] : Mean(lp[i]); };
    double best = -std::numeric_limits<double>::infinity();
    for (size_t i : remaining) best = std::max(best, at(i));
    std::vector<size_t> kept;
    for (size_t i : remaining) {
      if (at(i) == best) kept.push_back(i);
    }
    remaining.swap(kept);
  }
  return remaining.front();
}

std::vector<double> Values(const std::vector<ScoredToken>& tokens, bool missing_is_zero) {
  std::vector<double> v;
  v.reserve(tokens.size());
  for (const ScoredToken& t : tokens) {
    v.push_back(t.logprob.has_value()
                    ? *t.logprob
                    : (missing_is_zero ? 0.0 : -std::numeric_limits<double>::infinity()));
  }
  return v;
}

}  // namespace

StatusOr<SelectDecision> ChooseOption(SelectMethod method,
                                      const std::vector<std::vector<double>>& conditional,
                                      const std::vector<std::vector<double>>& unconditional) {
  if (conditional.empty()) return InvalidArgument("select needs at least one option");
  for (size_t i = 0; i < conditional.size(); ++i) {
    if (conditional[i].empty()) {
      return InvalidArgument("select option " + std::to_string(i) + " has no tokens to score");
    }
  }
  SelectDecision d;
  d.token_logprobs = conditional;
  for (const auto& o : conditional) d.scores.push_back(Mean(o));
  switch (method) {
    case SelectMethod::kTokenLengthNormalized:
      d.chosen = ArgMax(d.scores);
      break;
    case SelectMethod::kGreedyToken:
      d.chosen = GreedyToken(conditional);
      break;
    case SelectMethod::kUnconditionalLikelihoodNormalized:
      if (unconditional.size() != conditional.size()) {
        return InvalidArgument(
            "unconditional likelihood normalization needs the logprobs of "
            "every option alone");
      }
      for (size_t i = 0; i < conditional.size(); ++i) {
        if (unconditional[i].size() != conditional[i].size()) {
          return InvalidArgument("option " + std::to_string(i) +
                                 ": conditional and unconditional token counts differ");
        }
        std::vector<double> diff(conditional[i].size());
        for (size_t j = 0; j < diff.size(); ++j) diff[j] = conditional[i][j] - unconditional[i][j];
        d.scores[i] = Mean(diff);
      }
      d.chosen = ArgMax(d.scores);
      break;
  }
  return d;
}

StatusOr<SelectDecision> SelectOption(Backend& backend, const std::string& prefix,
                                      const std::vector<std::string>& options,
                                      SelectMethod method) {
  if (options.empty()) return InvalidArgument("select needs at least one option");
  for (const std::string& option : options) {
    if (option.empty()) return InvalidArgument("select options must not be empty");
  }
  // With a radix cache the prefix is committed once, so the options' scoring requests (sent
  // together) all find it cached; the commit reports its token count too. Without a cache a
  // commit would only be computed again: count the tokens.
  int64_t prefix_tokens = 0;
  if (backend.caches_prefixes()) {
    RADIXLM_ASSIGN_OR_RETURN(const PrefixCommit commit,
                             backend.CommitPrefix(prefix, /*pin=*/false));
    prefix_tokens = commit.prompt_tokens;
  } else {
    RADIXLM_ASSIGN_OR_RETURN(prefix_tokens, backend.CountPromptTokens(prefix));
  }
  std::vector<std::string> prompts;
  for (const std::string& option : options) prompts.push_back(prefix + option);
  StatusOr<std::vector<std::vector<ScoredToken>>> scored =
      backend.ScorePrompts(prompts, static_cast<int32_t>(prefix_tokens));
  std::vector<std::vector<ScoredToken>> alone;
  std::vector<std::vector<double>> conditional, unconditional;
  Status status = scored.status();
  if (status.ok()) {
    for (size_t i = 0; i < options.size(); ++i) {
      if ((*scored)[i].empty()) {
        status =
            InvalidArgument("select option \"" + options[i] + "\" adds no tokens after the prefix");
        break;
      }
      conditional.push_back(Values((*scored)[i], /*missing_is_zero=*/false));
    }
  }
  if (status.ok() && method == SelectMethod::kUnconditionalLikelihoodNormalized) {
    std::vector<std::vector<int32_t>> ids;
    for (const auto& option : *scored) {
      ids.emplace_back();
      for (const ScoredToken& t : option) ids.back().push_back(t.token);
    }
    StatusOr<std::vector<std::vector<ScoredToken>>> u = backend.ScoreTokenSequences(ids);
    if (u.ok()) {
      for (const auto& option : *u)
        unconditional.push_back(Values(option, /*missing_is_zero=*/true));
    } else {
      status = u.status();
    }
  }
  RADIXLM_RETURN_IF_ERROR(status);
  return ChooseOption(method, conditional, unconditional);
}

}  // namespace radixlm::frontend
