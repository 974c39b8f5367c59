// The Engine on the real default model (gemma-3-270m): greedy outputs must not depend on how
// requests were scheduled — radix cache on or off, chunked or whole prefill, batched or one
// by one, retracted or not — and cached_tokens reports the shared prefix.
//
// Runs only when RADIXLM_DEFAULT_MODEL names an existing file (CI sets it); skipped under the
// sanitizers (slow there, and the fake-model tests cover the same code).
#include <gtest/gtest.h>

#include <map>

#include "engine/engine.h"
#include "support/real_model.h"

namespace radixlm {
namespace {

class RealModelEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
  }

  static EngineConfig BaseConfig() {
    EngineConfig c;
    c.model_path = testing::RealModelPath();
    c.max_total_tokens = 4096;
    c.context_length = 1024;
    c.max_running_requests = 8;
    c.chunked_prefill_size = 512;
    c.max_prefill_tokens = 1024;
    return c;
  }

  static std::unique_ptr<Engine> Make(const EngineConfig& c) {
    auto e = Engine::Create(c);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  static GenerateRequest Greedy(const std::string& text, int32_t max_new) {
    GenerateRequest r;
    r.text = text;
    r.sampling_params.temperature = 0;
    r.sampling_params.max_new_tokens = max_new;
    r.sampling_params.ignore_eos = true;
    return r;
  }

  // All prompts submitted together (batched) or each after the previous finished.
  static std::vector<GenerateResult> Run(Engine& engine, const std::vector<std::string>& prompts,
                                         int32_t max_new, bool batched) {
    std::vector<GenerateResult> out;
    std::vector<std::shared_ptr<GenerateStream>> streams;
    for (const std::string& p : prompts) {
      auto s = engine.Submit(Greedy(p, max_new));
      EXPECT_TRUE(s.ok()) << s.status().ToString();
      if (!s.ok()) return out;
      if (batched) {
        streams.push_back(*s);
      } else {
        out.push_back((*s)->Collect()[0]);
      }
    }
    for (auto& s : streams) out.push_back(s->Collect()[0]);
    return out;
  }

  static std::vector<std::string> Prompts() {
    const std::string system =
        "You are a helpful assistant that answers questions about geography briefly and "
        "precisely. ";
    return {system + "What is the capital of France?",
            system + "What is the longest river in Africa?",
            system + "Name a country in South America.",
            "Once upon a time, in a small village by the sea, there lived"};
  }
};

TEST_F(RealModelEngineTest, GreedyOutputsDoNotDependOnScheduling) {
  constexpr int32_t kNew = 8;
  // Reference: no cache, no chunking, one by one.
  EngineConfig ref_config = BaseConfig();
  ref_config.disable_radix_cache = true;
  ref_config.chunked_prefill_size = -1;
  std::vector<GenerateResult> reference;
  {
    auto engine = Make(ref_config);
    ASSERT_NE(engine, nullptr);
    reference = Run(*engine, Prompts(), kNew, /*batched=*/false);
  }
  ASSERT_EQ(reference.size(), Prompts().size());
  for (const GenerateResult& r : reference) ASSERT_EQ(r.output_ids.size(), size_t{kNew});

  struct Variant {
    const char* name;
    bool radix;
    int64_t chunk;
    bool batched;
  };
  // One engine per cache/chunk setting; batched runs go first so the cache is cold for them.
  for (const Variant& v : {Variant{"radix+chunk16,batched", true, 16, true},
                           Variant{"nocache+chunk16,batched", false, 16, true},
                           Variant{"radix,whole,one-by-one", true, -1, false}}) {
    SCOPED_TRACE(v.name);
    EngineConfig c = BaseConfig();
    c.disable_radix_cache = !v.radix;
    c.chunked_prefill_size = v.chunk;
    auto engine = Make(c);
    ASSERT_NE(engine, nullptr);
    std::vector<GenerateResult> got = Run(*engine, Prompts(), kNew, v.batched);
    ASSERT_EQ(got.size(), reference.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].output_ids, reference[i].output_ids) << "prompt " << i;
      EXPECT_EQ(got[i].text, reference[i].text) << "prompt " << i;
    }
    if (v.radix) {
      // Run again: now served largely from the cache, same outputs.
      std::vector<GenerateResult> again = Run(*engine, Prompts(), kNew, true);
      for (size_t i = 0; i < again.size(); ++i) {
        EXPECT_EQ(again[i].output_ids, reference[i].output_ids) << "cached prompt " << i;
        EXPECT_GT(again[i].meta.cached_tokens, 0);
      }
    }
  }
}

TEST_F(RealModelEngineTest, RetractionUnderATinyPoolKeepsGreedyOutputs) {
  constexpr int32_t kNew = 24;
  std::vector<std::string> prompts = {"The quick brown fox", "In the beginning",
                                      "My favourite food is", "Paris is a city"};
  EngineConfig ref_config = BaseConfig();
  std::vector<GenerateResult> reference;
  {
    auto engine = Make(ref_config);
    ASSERT_NE(engine, nullptr);
    reference = Run(*engine, prompts, kNew, false);
  }
  EngineConfig tiny = BaseConfig();
  tiny.max_total_tokens = 96;
  tiny.max_running_requests = 4;
  tiny.schedule_conservativeness = 0.05;  // admit optimistically so decodes run dry
  auto engine = Make(tiny);
  ASSERT_NE(engine, nullptr);
  std::vector<GenerateResult> got = Run(*engine, prompts, kNew, true);
  ASSERT_EQ(got.size(), reference.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].output_ids, reference[i].output_ids) << "prompt " << i;
  }
  EXPECT_GT(engine->GetStats().scheduler.retractions, 0);
}

// Resident bytes by kind: one copy of the weights (the packed matrices' pages of the mapping
// are released), about the file's size; the KV pool as sized; the forward scratch.
TEST_F(RealModelEngineTest, MemoryByKind) {
  EngineConfig c = BaseConfig();
  std::vector<std::string> lines;
  c.on_load_progress = [&lines](const std::string& line) { lines.push_back(line); };
  auto engine = Make(c);
  ASSERT_NE(engine, nullptr);
  // A load this small reports nothing, or (on a slow machine) lines of the documented form.
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.rfind("loading weights: ", 0) == 0 || line.rfind("loaded weights: ", 0) == 0)
        << line;
  }
  const MemoryCounters m = engine->GetStats().memory;
  const double file_bytes = static_cast<double>(engine->assets().info().file_bytes);
  EXPECT_GT(m.weights_bytes, 0.3 * file_bytes);
  EXPECT_LT(m.weights_bytes, 2.0 * file_bytes);
  // Every layer's rows for the pool's tokens at most (windowed layers have fewer of their own).
  EXPECT_GE(m.kv_pool_bytes, c.max_total_tokens * engine->kv_token_bytes() / 2);
  EXPECT_LE(m.kv_pool_bytes, (c.max_total_tokens + 64) * engine->kv_token_bytes());
  EXPECT_GT(m.scratch_bytes, 0);
  EXPECT_GT(m.rss_bytes, 0);
}

TEST_F(RealModelEngineTest, CachedTokensIsTheSharedPrefix) {
  for (int32_t page : {1, 16}) {
    SCOPED_TRACE("page_size " + std::to_string(page));
    EngineConfig c = BaseConfig();
    c.page_size = page;
    auto engine = Make(c);
    ASSERT_NE(engine, nullptr);
    const auto first = engine->assets().codec().Encode(Prompts()[0]);
    const auto second = engine->assets().codec().Encode(Prompts()[1]);
    ASSERT_TRUE(first.ok() && second.ok());
    size_t shared = 0;
    while (shared < first->size() && shared < second->size() &&
           (*first)[shared] == (*second)[shared]) {
      ++shared;
    }
    ASSERT_GT(shared, 16u);
    Run(*engine, {Prompts()[0]}, 2, false);
    std::vector<GenerateResult> r = Run(*engine, {Prompts()[1]}, 2, false);
    EXPECT_EQ(r[0].meta.cached_tokens, static_cast<int64_t>(shared / page * page));
  }
}

}  // namespace
}  // namespace radixlm
