#include "sampling/generate_output.h"

#include <utility>

namespace radixlm {

void GenerateOutput::Append(GenerateOutput&& chunk) {
  index = chunk.index;
  text += chunk.text;
  output_ids.insert(output_ids.end(), chunk.output_ids.begin(), chunk.output_ids.end());
  for (LogprobEntry& e : chunk.output_token_logprobs) {
    output_token_logprobs.push_back(std::move(e));
  }
  for (LogprobEntry& e : chunk.input_token_logprobs) input_token_logprobs.push_back(std::move(e));
  if (chunk.finish_reason.has_value()) finish_reason = std::move(chunk.finish_reason);
  if (!chunk.embedding.empty()) embedding = std::move(chunk.embedding);
  meta = std::move(chunk.meta);
}

}  // namespace radixlm
