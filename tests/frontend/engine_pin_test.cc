// Engine::PinPrefix: a pinned prefix survives the pool running dry; unpinned, it is evictable.
#include <gtest/gtest.h>

#include "fake_backend.h"
#include "testing/fake_token_text.h"

namespace radixlm::frontend {
namespace {

GenerateRequest Prefill(std::vector<int32_t> ids, int32_t max_new = 0) {
  GenerateRequest r;
  r.input_ids = std::move(ids);
  r.sampling_params.max_new_tokens = max_new;
  r.sampling_params.temperature = 0;
  r.sampling_params.ignore_eos = true;
  return r;
}

std::vector<int32_t> Ids(int n, int salt) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(3 + (i * 7 + salt * 13) % 60);
  return ids;
}

int64_t CachedAfterRerun(Engine& engine, const std::vector<int32_t>& ids) {
  auto s = engine.Submit(Prefill(ids));
  EXPECT_TRUE(s.ok());
  return (*s)->Collect()[0].meta.cached_tokens;
}

TEST(FrontendEnginePinTest, APinnedPrefixIsNotEvictedAndFlushWaitsForUnpin) {
  testing::FakeSetup f = testing::MakeFakeSetup(/*max_total_tokens=*/256);
  Engine& engine = *f.engine;
  const std::vector<int32_t> a = Ids(100, 1);
  ASSERT_EQ(CachedAfterRerun(engine, a), 0);
  auto pin = engine.PinPrefix(a);
  ASSERT_TRUE(pin.ok()) << pin.status().ToString();
  EXPECT_EQ(pin->tokens, 100);
  EXPECT_EQ(engine.GetStats().scheduler.protected_tokens, 100);
  EXPECT_EQ(engine.FlushCache().code(), StatusCode::kAborted);
  // Other prompts fill the rest of the pool several times over.
  for (int salt = 2; salt < 6; ++salt) CachedAfterRerun(engine, Ids(120, salt));
  EXPECT_EQ(CachedAfterRerun(engine, a), 99);  // still cached (all but the last token)
  engine.UnpinPrefix(pin->id);
  EXPECT_EQ(engine.GetStats().scheduler.protected_tokens, 0);
  for (int salt = 6; salt < 10; ++salt) CachedAfterRerun(engine, Ids(120, salt));
  EXPECT_LT(CachedAfterRerun(engine, a), 99);  // now evictable, and evicted
  EXPECT_TRUE(engine.FlushCache().ok());
}

TEST(FrontendEnginePinTest, PinningAnUncachedPrefixPinsNothing) {
  testing::FakeSetup f = testing::MakeFakeSetup();
  auto pin = f.engine->PinPrefix(Ids(10, 3));
  ASSERT_TRUE(pin.ok());
  EXPECT_EQ(pin->tokens, 0);
  f.engine->UnpinPrefix(pin->id);
  f.engine->UnpinPrefix(12345);  // unknown: ignored
  EXPECT_TRUE(f.engine->FlushCache().ok());
}

}  // namespace
}  // namespace radixlm::frontend
