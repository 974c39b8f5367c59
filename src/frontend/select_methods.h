// How `select` turns per-option token logprobs into a choice (SGLang's choices sampling
// methods, python/sglang/lang/choices.py), and the scoring calls behind it.
//
//   token length normalized (default): the option with the highest mean token logprob given
//     the prefix.
//   greedy token: walk positions 0, 1, ...; at each keep only the options whose logprob there
//     is the highest (an option shorter than the longest is padded with its own mean); stop
//     when one is left (ties: the first).
//   unconditional likelihood normalized: the highest mean of (logprob given the prefix -
//     logprob of the same token in the option's tokens scored alone), the alone-logprob of the
//     first token (which nothing predicts) counting as 0.
//
// Which tokens are the option's: P = the prefix's prompt token count as the server counts it
// (the prefix's commit when the backend caches prefixes, else Backend::CountPromptTokens); the
// option's tokens are positions [P, N) of prefix + option. (A token that merges across the
// boundary is thus left out, identically in-process and remote.) The options are scored
// together; with a radix cache the committed prefix is computed once for all of them.
#pragma once

#include <string>
#include <vector>

#include "frontend/backend.h"
#include "frontend/ir.h"
#include "util/status.h"

namespace radixlm::frontend {

struct SelectDecision {
  size_t chosen = 0;
  std::vector<double> scores;  // per option, the score the method maximized (mean logprob
                               // for the normalized methods; for greedy, the mean too)
  std::vector<std::vector<double>> token_logprobs;  // per option, given the prefix
};

// Picks with `method` from per-option token logprobs given the prefix (each non-empty) and,
// for the unconditional method, per-option logprobs of the tokens alone (same lengths).
StatusOr<SelectDecision> ChooseOption(SelectMethod method,
                                      const std::vector<std::vector<double>>& conditional,
                                      const std::vector<std::vector<double>>& unconditional = {});

// Scores `options` after `prefix` on the backend and picks one.
StatusOr<SelectDecision> SelectOption(Backend& backend, const std::string& prefix,
                                      const std::vector<std::string>& options, SelectMethod method);

}  // namespace radixlm::frontend
