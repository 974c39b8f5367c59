// Prefill/decode disaggregation under LoRA adapters, between two Engines on the real default
// model without a transport (api.h: export_kv_room / import_kv). The record carries the
// adapter the KV was computed under: a decode request of the same adapter (by content: it may
// be loaded under another name there) imports it into its adapter's branch of the tree and
// decodes under the adapter, as a plain run does; a request of another adapter, or of the base
// model for an adapter's KV (and the reverse), ends with a 400 naming both, importing nothing.
//
// Runs only when RADIXLM_DEFAULT_MODEL names an existing file (CI sets it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/lora_registry.h"
#include "gguf/gguf_file.h"
#include "model/lora_fixture.h"
#include "support/real_model.h"

namespace radixlm {
namespace {

namespace fs = std::filesystem;

constexpr char kPrompt[] = "Once upon a time, in a small village by the sea, there lived";

class RealModelPdLoraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing::RealModelSkipReason(); !why.empty()) GTEST_SKIP() << why;
    dir_ = fs::temp_directory_path() /
           ("radixlm_pd_lora_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto base = gguf::GgufFile::Open(testing::RealModelPath());
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    for (uint32_t seed : {1u, 2u}) {
      model::testing::LoraSpec spec;
      spec.rank = 8;
      spec.stddev = 0.03f;
      spec.seed = seed;
      const std::vector<uint8_t> bytes = model::testing::BuildLoraAdapter(**base, spec);
      const std::string path = (dir_ / ("adapter" + std::to_string(seed) + ".gguf")).string();
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
      adapters_.push_back(path);
    }
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // An engine serving adapters_[0] and adapters_[1] under the names given.
  std::unique_ptr<Engine> Make(const std::string& first, const std::string& second) {
    EngineConfig c;
    c.model_path = testing::RealModelPath();
    c.max_total_tokens = 4096;
    c.context_length = 1024;
    c.max_running_requests = 8;
    c.lora_paths = {first + "=" + adapters_[0], second + "=" + adapters_[1]};
    auto e = Engine::Create(c);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  static GenerateRequest Greedy(const std::string& lora) {
    GenerateRequest r;
    r.text = kPrompt;
    r.lora_path = lora;
    r.sampling_params.temperature = 0.0f;
    r.sampling_params.max_new_tokens = 8;
    r.sampling_params.ignore_eos = true;
    return r;
  }

  // Makes `prefill` a prefill engine whose exports Export waits for.
  void ExportFrom(Engine& prefill) {
    prefill.SetKvExportSink([this](uint64_t room, StatusOr<PrefixKv> kv) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = exports_.find(room);
      if (it == exports_.end()) return;
      it->second.set_value(std::move(kv));
      exports_.erase(it);
    });
  }

  // The prompt's KV exported by `prefill` (ExportFrom) under adapter `lora` ("" : the base
  // model).
  StatusOr<PrefixKv> Export(Engine& prefill, const std::string& lora, uint64_t room) {
    std::future<StatusOr<PrefixKv>> exported;
    {
      std::lock_guard<std::mutex> lock(mu_);
      exported = exports_[room].get_future();
    }
    GenerateRequest once = Greedy(lora);
    once.sampling_params.max_new_tokens = 1;
    once.export_kv_room = room;
    auto computed = prefill.Submit(once);
    EXPECT_TRUE(computed.ok()) << computed.status().ToString();
    if (!computed.ok()) return computed.status();
    (*computed)->Collect();
    return exported.get();
  }

  // One greedy request of `decode` under `lora` from the imported KV.
  static GenerateResult Import(Engine& decode, const std::string& lora, const PrefixKv& kv) {
    std::promise<StatusOr<PrefixKv>> ready;
    ready.set_value(kv);
    GenerateRequest r = Greedy(lora);
    r.import_kv = ready.get_future().share();
    auto stream = decode.Submit(r);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return {};
    std::vector<GenerateResult> results = (*stream)->Collect();
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? GenerateResult{} : results.front();
  }

  static GenerateResult Plain(Engine& engine, const std::string& lora) {
    auto stream = engine.Submit(Greedy(lora));
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return {};
    return (*stream)->Collect().front();
  }

  fs::path dir_;
  std::vector<std::string> adapters_;
  std::mutex mu_;
  std::map<uint64_t, std::promise<StatusOr<PrefixKv>>> exports_;  // GUARDED_BY(mu_)
};

TEST_F(RealModelPdLoraTest, TheSameAdapterImportsAndDecodesUnderIt) {
  auto prefill = Make("tutor", "poet");
  auto decode = Make("tutor-v1", "poet-v1");  // the same files under other names
  ASSERT_NE(prefill, nullptr);
  ASSERT_NE(decode, nullptr);
  ExportFrom(*prefill);
  const GenerateResult want = Plain(*prefill, "tutor");
  ASSERT_NE(want.output_ids, Plain(*prefill, "").output_ids) << "the adapter changes the output";
  ASSERT_TRUE(prefill->FlushCache().ok());

  StatusOr<PrefixKv> kv = Export(*prefill, "tutor", 11);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  EXPECT_EQ(kv->lora_name, "tutor");
  EXPECT_NE(kv->lora_identity, 0u);
  // The adapter's KV, not an empty prefix (the base model's branch holds nothing).
  EXPECT_GE(static_cast<int64_t>(kv->tokens.size()), want.meta.prompt_tokens - 1);

  const GenerateResult got = Import(*decode, "tutor-v1", *kv);
  ASSERT_TRUE(got.finish_reason.has_value());
  EXPECT_FALSE(got.finish_reason->is_abort()) << got.finish_reason->matched_text;
  EXPECT_EQ(got.output_ids, want.output_ids);
  EXPECT_GE(got.meta.cached_tokens, got.meta.prompt_tokens - 1) << "the imported KV is used";
  // It went to the adapter's branch, which the tree view names after the adapter; the base
  // model and the other adapter find nothing.
  StatusOr<RadixTreeSnapshot> tree = decode->GetRadixTree({});
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  bool named = false;
  for (const RadixTreeEntry& e : tree->entries) {
    if (e.parent == 0) {
      EXPECT_EQ(e.lora_adapter, "tutor-v1");
      named = e.lora_namespace > 0;
    }
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(Plain(*decode, "").meta.cached_tokens, 0);
  EXPECT_EQ(Plain(*decode, "poet-v1").meta.cached_tokens, 0);
  ASSERT_TRUE(decode->lora()->Unload("tutor-v1").ok());
  tree = decode->GetRadixTree({});
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  std::vector<std::string> labels;
  for (const RadixTreeEntry& e : tree->entries) {
    if (e.parent == 0) labels.push_back(e.lora_adapter);
  }
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(labels, (std::vector<std::string>{"", "poet-v1", "tutor-v1 (unloaded)"}));
}

TEST_F(RealModelPdLoraTest, AnotherAdapterOrTheBaseModelIsA400NamingBoth) {
  auto prefill = Make("tutor", "poet");
  auto decode = Make("tutor", "poet");
  ASSERT_NE(prefill, nullptr);
  ASSERT_NE(decode, nullptr);
  ExportFrom(*prefill);
  StatusOr<PrefixKv> tutor_kv = Export(*prefill, "tutor", 21);
  StatusOr<PrefixKv> base_kv = Export(*prefill, "", 22);
  ASSERT_TRUE(tutor_kv.ok()) << tutor_kv.status().ToString();
  ASSERT_TRUE(base_kv.ok()) << base_kv.status().ToString();
  EXPECT_EQ(base_kv->lora_identity, 0u);

  struct Case {
    const PrefixKv* kv;
    std::string lora;
    std::vector<std::string> named;  // what the message must name
  };
  const std::vector<Case> cases = {
      {&*tutor_kv, "poet", {"'tutor'", "'poet'"}},
      {&*tutor_kv, "", {"'tutor'", "base model"}},
      {&*base_kv, "tutor", {"base model", "'tutor'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("record of '" + c.kv->lora_name + "', request of '" + c.lora + "'");
    const GenerateResult got = Import(*decode, c.lora, *c.kv);
    ASSERT_TRUE(got.finish_reason.has_value());
    ASSERT_TRUE(got.finish_reason->is_abort());
    EXPECT_EQ(got.finish_reason->status_code, 400);
    for (const std::string& name : c.named) {
      EXPECT_NE(got.finish_reason->matched_text.find(name), std::string::npos)
          << got.finish_reason->matched_text;
    }
    EXPECT_TRUE(got.output_ids.empty());
  }
  // Nothing was imported: no branch of the decode server's tree holds the prompt.
  for (const std::string lora : {"", "tutor", "poet"}) {
    EXPECT_EQ(Plain(*decode, lora).meta.cached_tokens, 0) << lora;
  }
}

}  // namespace
}  // namespace radixlm
