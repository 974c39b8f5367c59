// Test helpers: an Engine over the scheduler's fake runner and codec (deterministic, no model
// file), wrapped in an EngineBackend with plain roles ("user\n" ... "\n").
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <vector>

#include "engine/engine.h"
#include "frontend/engine_backend.h"
#include "testing/fake_model_runner.h"

namespace radixlm::frontend::testing {

struct FakeSetup {
  std::unique_ptr<Engine> engine;
  FakeModelRunner* runner = nullptr;  // owned by the engine
  std::unique_ptr<EngineBackend> backend;
};

FakeSetup MakeFakeSetup(int64_t max_total_tokens = 4096,
                        std::chrono::microseconds forward_delay = std::chrono::microseconds(0),
                        bool disable_radix_cache = false);

// log softmax of the fake model's logits after `prefix`, at token `next` — the reference for
// input logprobs, computed without the engine.
double ReferenceLogprob(const FakeModelRunner& runner, std::span<const int32_t> prefix,
                        int32_t next);

}  // namespace radixlm::frontend::testing
