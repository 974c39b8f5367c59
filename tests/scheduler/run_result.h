// What the hybrid-model scheduler tests compare between runs: a request's tokens, logprobs and
// cached tokens; the prompts they use; and bit-for-bit equality of two runs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sampling/generate_output.h"

namespace radixlm::scheduler_testing {

using Ids = std::vector<int32_t>;

struct Result {
  Ids tokens;
  std::vector<LogprobEntry> logprobs;
  int64_t cached_tokens = 0;
};

// n token ids in [1, 99] from an xorshift stream seeded by `seed`.
inline Ids Prompt(uint32_t seed, int64_t n) {
  Ids p(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
  for (auto& t : p) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t = static_cast<int32_t>(1 + x % 99);
  }
  return p;
}

// The same tokens, logprobs and top alternatives, bit for bit (the forward is batch-invariant,
// so where a prefix's KV or state came from must not change a single bit).
inline void ExpectSame(const Result& got, const Result& want, const std::string& what) {
  EXPECT_EQ(got.tokens, want.tokens) << what;
  ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << what;
  for (size_t i = 0; i < got.logprobs.size(); ++i) {
    const LogprobEntry& g = got.logprobs[i];
    const LogprobEntry& w = want.logprobs[i];
    ASSERT_TRUE(g.logprob.has_value() && w.logprob.has_value());
    EXPECT_EQ(*g.logprob, *w.logprob) << what << ", token " << i;
    ASSERT_EQ(g.top.size(), w.top.size()) << what;
    for (size_t k = 0; k < g.top.size(); ++k) {
      EXPECT_EQ(g.top[k].token, w.top[k].token) << what << ", token " << i << ", top " << k;
      EXPECT_EQ(g.top[k].logprob, w.top[k].logprob) << what << ", token " << i;
    }
  }
}

}  // namespace radixlm::scheduler_testing
