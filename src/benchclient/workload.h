// Bench workloads: the prompts `radixlm bench` sends, with their intended lengths.
//
//   random                  num_prompts prompts of input_len tokens (uniform in
//                           [input_len * range_ratio, input_len]) and output lengths likewise
//   generated-shared-prefix groups x prompts_per_group; every prompt of a group is that
//                           group's system prompt (system_len tokens) + its own question
//                           (question_len tokens); output_len tokens each
//
// Text is made of random common English words. With a tokenizer, lengths are exact in its
// tokens (words are encoded, cut to the length, decoded back, as SGLang's bench does with
// random ids); without one, one word stands for one token. Prompts are shuffled (seeded) so
// the shared-prefix groups arrive interleaved, as in SGLang's bench.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace radixlm::tokenizer {
class Tokenizer;
}

namespace radixlm::benchclient {

struct BenchPrompt {
  std::string text;
  int64_t prompt_len = 0;  // tokens (as the tokenizer counts), or words without one
  int64_t output_len = 0;  // max new tokens requested
};

struct RandomWorkloadOptions {
  int num_prompts = 100;
  int64_t input_len = 256;
  int64_t output_len = 64;
  double range_ratio = 1.0;  // lengths uniform in [len * ratio, len]
};

struct SharedPrefixWorkloadOptions {
  int groups = 8;
  int prompts_per_group = 16;
  int64_t system_len = 1024;
  int64_t question_len = 64;
  int64_t output_len = 64;
};

// tokenizer may be null (lengths in words).
std::vector<BenchPrompt> MakeRandomWorkload(const RandomWorkloadOptions& options,
                                            const tokenizer::Tokenizer* tokenizer, uint64_t seed);
std::vector<BenchPrompt> MakeSharedPrefixWorkload(const SharedPrefixWorkloadOptions& options,
                                                  const tokenizer::Tokenizer* tokenizer,
                                                  uint64_t seed);

}  // namespace radixlm::benchclient
