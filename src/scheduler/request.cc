#include "scheduler/request.h"

#include <algorithm>

namespace radixlm {

Request::Request(RequestInput input, int64_t effective_max_new_tokens, uint64_t seed_value)
    : in(std::move(input)), max_new_tokens(effective_max_new_tokens), seed(seed_value) {
  token_ids = in.input_ids;
  prompt_len = static_cast<int64_t>(token_ids.size());
  token_ids.reserve(prompt_len + std::min<int64_t>(max_new_tokens, 1 << 16));
  in.input_ids.clear();
  in.input_ids.shrink_to_fit();  // token_ids is the one copy
  cache.priority = in.priority;
  cache.key_namespace = in.lora_namespace;
  if (in.params.repetition_penalty != 1.0f) penalties.SetPromptTokens(prompt());
  if (in.grammar != nullptr) matcher.emplace(in.grammar);
}

int64_t Request::MaxPrefixLen() const {
  const int64_t all = static_cast<int64_t>(token_ids.size());
  int64_t limit = all - 1;
  if (wants_input_logprobs()) limit = std::min(limit, first_logprob_row());
  if (PoolingNeedsAllRows(in.pooling)) limit = 0;  // every position's hidden state is read
  return std::max<int64_t>(limit, 0);
}

std::vector<std::pair<int64_t, int64_t>> Request::WholeRanges(int64_t from) const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const PromptImage& image : in.images) {
    const int64_t end = image.begin + image.n;
    if (image.bidirectional && end > from) {
      ranges.emplace_back(std::max(image.begin, from) - from, end - from);
    }
  }
  return ranges;
}

}  // namespace radixlm
