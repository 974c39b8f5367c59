#include "fake_backend.h"

#include <gtest/gtest.h>

#include <cmath>

#include "testing/fake_token_text.h"

namespace radixlm::frontend::testing {

FakeSetup MakeFakeSetup(int64_t max_total_tokens, std::chrono::microseconds forward_delay,
                        bool disable_radix_cache) {
  EngineConfig config;
  config.disable_radix_cache = disable_radix_cache;
  config.max_total_tokens = max_total_tokens;
  config.chunked_prefill_size = 128;
  FakeModelConfig fm;
  fm.vocab_size = FakeTokenTextCodec::kVocabSize;
  fm.context_length = 1024;
  fm.kv_slots = max_total_tokens + 1;
  fm.forward_delay = forward_delay;
  auto runner = std::make_unique<FakeModelRunner>(fm);
  FakeSetup setup;
  setup.runner = runner.get();
  auto engine = Engine::Create(config, std::move(runner), std::make_unique<FakeTokenTextCodec>());
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  setup.engine = std::move(engine).value();
  auto backend = EngineBackend::Create(setup.engine.get(), {.chat_roles = ChatRoles::Plain()});
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  setup.backend = std::move(backend).value();
  return setup;
}

double ReferenceLogprob(const FakeModelRunner& runner, std::span<const int32_t> prefix,
                        int32_t next) {
  uint64_t h = FakeModelRunner::InitialHash();
  int64_t pos = 0;
  for (int32_t t : prefix) h = FakeModelRunner::ExtendHash(h, t, pos++);
  std::vector<float> logits(static_cast<size_t>(runner.vocab_size()));
  runner.FillLogits(h, logits.data());
  double max = logits[0];
  for (float l : logits) max = std::max<double>(max, l);
  double sum = 0;
  for (float l : logits) sum += std::exp(l - max);
  return logits[static_cast<size_t>(next)] - max - std::log(sum);
}

}  // namespace radixlm::frontend::testing
