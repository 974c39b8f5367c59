// Test helpers shared by the engine tests: an Engine over the fake runner and codec, greedy
// requests and deterministic prompts.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "testing/fake_model_runner.h"
#include "testing/fake_token_text.h"

namespace radixlm::engine_testing {

struct FakeEngine {
  std::unique_ptr<Engine> engine;
  FakeModelRunner* runner = nullptr;  // owned by the engine
};

inline FakeEngine MakeEngine(EngineConfig config = {}, std::chrono::microseconds forward_delay =
                                                           std::chrono::microseconds(0)) {
  if (config.max_total_tokens <= 0) config.max_total_tokens = 4096;
  config.chunked_prefill_size = config.chunked_prefill_size == EngineConfig{}.chunked_prefill_size
                                    ? 128
                                    : config.chunked_prefill_size;
  FakeModelConfig fm;
  fm.vocab_size = FakeTokenTextCodec::kVocabSize;
  fm.context_length = 1024;
  fm.kv_slots = (config.max_total_tokens / config.page_size + 1) * config.page_size;
  fm.forward_delay = forward_delay;
  auto runner = std::make_unique<FakeModelRunner>(fm);
  FakeEngine fe;
  fe.runner = runner.get();
  auto engine = Engine::Create(config, std::move(runner), std::make_unique<FakeTokenTextCodec>());
  EXPECT_TRUE(engine.ok()) << engine.status().ToString();
  fe.engine = std::move(engine).value();
  return fe;
}

inline GenerateRequest Greedy(std::vector<int32_t> ids, int32_t max_new) {
  GenerateRequest r;
  r.input_ids = std::move(ids);
  r.sampling_params.temperature = 0;
  r.sampling_params.max_new_tokens = max_new;
  r.sampling_params.ignore_eos = true;
  return r;
}

inline std::vector<int32_t> Prompt(int n, int32_t salt = 0) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(3 + (i * 7 + salt * 13) % 60);
  return p;
}

}  // namespace radixlm::engine_testing
