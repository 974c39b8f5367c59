// Prefill/decode disaggregation between two Engines on the real default model, without a
// transport (api.h: export_kv_room / import_kv): one engine exports a prompt's KV once, the other
// imports it and runs n samples from it. The samples must equal those of a plain engine, every
// sample must find the prompt cached, and the imported prefix stays pinned until the last sample
// ends, then nothing stays pinned.
//
// Runs only when RADIXLM_DEFAULT_MODEL names an existing file (CI sets it).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "engine/engine.h"
#include "support/real_model.h"

namespace radixlm {
namespace {

class RealModelPdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
  }

  static std::unique_ptr<Engine> Make() {
    EngineConfig c;
    c.model_path = testing::RealModelPath();
    c.max_total_tokens = 4096;
    c.context_length = 1024;
    c.max_running_requests = 8;
    auto e = Engine::Create(c);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  static GenerateRequest Seeded(int32_t n) {
    GenerateRequest r;
    r.text = "Once upon a time, in a small village by the sea, there lived";
    r.sampling_params.n = n;
    r.sampling_params.temperature = 0.8f;
    r.sampling_params.sampling_seed = 17;
    r.sampling_params.max_new_tokens = 10;
    r.sampling_params.ignore_eos = true;
    return r;
  }
};

TEST_F(RealModelPdTest, NSamplesFromOneImportedPromptEqualAPlainEngines) {
  auto prefill = Make();
  auto decode = Make();
  ASSERT_NE(prefill, nullptr);
  ASSERT_NE(decode, nullptr);
  std::promise<StatusOr<PrefixKv>> exported;
  int exports = 0;
  prefill->SetKvExportSink([&](uint64_t room, StatusOr<PrefixKv> kv) {
    EXPECT_EQ(room, 7u);
    if (exports++ == 0) exported.set_value(std::move(kv));
  });

  // The decode side waits for the KV before the prefill side has computed it.
  GenerateRequest imported = Seeded(3);
  imported.import_kv = exported.get_future().share();
  auto decoded = decode->Submit(imported);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();

  GenerateRequest once = Seeded(1);
  once.sampling_params.max_new_tokens = 1;
  once.export_kv_room = 7;
  auto computed = prefill->Submit(once);
  ASSERT_TRUE(computed.ok()) << computed.status().ToString();
  (*computed)->Collect();

  // A prefill request runs one sample: n > 1 with export_kv_room is refused.
  GenerateRequest two = Seeded(2);
  two.export_kv_room = 8;
  EXPECT_EQ(prefill->Submit(two).status().code(), StatusCode::kUnimplemented);

  const std::vector<GenerateResult> samples = (*decoded)->Collect();
  auto plain = prefill->Submit(Seeded(3));  // the same engine, no export: a plain run
  ASSERT_TRUE(plain.ok());
  const std::vector<GenerateResult> expected = (*plain)->Collect();
  ASSERT_EQ(samples.size(), 3u);
  ASSERT_EQ(expected.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    ASSERT_TRUE(samples[i].finish_reason.has_value());
    EXPECT_FALSE(samples[i].finish_reason->is_abort()) << samples[i].finish_reason->matched_text;
    EXPECT_EQ(samples[i].output_ids, expected[i].output_ids);
    EXPECT_GE(samples[i].meta.cached_tokens, samples[i].meta.prompt_tokens - 1);
  }
  EXPECT_EQ(exports, 1);

  // The pin is released after the step that ended the last sample.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (decode->GetStats().scheduler.protected_tokens != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(decode->GetStats().scheduler.protected_tokens, 0);
}

}  // namespace
}  // namespace radixlm
