// GrammarCache: compile-once under concurrency, cached errors, deferred compilation.
#include <gtest/gtest.h>

#include <thread>

#include "grammar/grammar_cache.h"
#include "test_util.h"

namespace radixlm::grammar {
namespace {

TEST(GrammarCacheTest, ConcurrentGetsCompileOnce) {
  GrammarCache cache(testing::SyntheticVocab());
  const std::string schema = R"({"type":"object","properties":{"a":{"type":"integer"}}})";
  std::vector<std::shared_ptr<const CompiledGrammar>> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto r = cache.Get(GrammarKind::kJsonSchema, schema);
      if (r.ok()) results[i] = *r;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.num_compiles(), 1u);
  for (const auto& r : results) {
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r.get(), results[0].get());
  }
  // Same text, another kind: a different entry.
  ASSERT_TRUE(cache.Get(GrammarKind::kRegex, "a+").ok());
  ASSERT_TRUE(cache.Get(GrammarKind::kEbnf, "root ::= \"a\"+").ok());
  EXPECT_EQ(cache.size(), 3u);
}

TEST(GrammarCacheTest, ErrorsAreCachedToo) {
  GrammarCache cache(testing::SyntheticVocab());
  auto first = cache.Get(GrammarKind::kRegex, "(");
  auto second = cache.Get(GrammarKind::kRegex, "(");
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(), second.status().message());
  EXPECT_EQ(cache.num_compiles(), 1u);
}

TEST(GrammarCacheTest, GetFutureDefersToTheRunner) {
  GrammarCache cache(testing::SyntheticVocab());
  std::vector<std::function<void()>> queued;
  auto runner = [&](std::function<void()> task) { queued.push_back(std::move(task)); };
  auto f1 = cache.GetFuture(GrammarKind::kRegex, "[0-9]+", runner);
  auto f2 = cache.GetFuture(GrammarKind::kRegex, "[0-9]+", runner);
  ASSERT_EQ(queued.size(), 1u);  // the second lookup joins the first compilation
  EXPECT_EQ(f1.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  std::thread worker(queued[0]);
  worker.join();
  ASSERT_TRUE(f2.get().ok());
  EXPECT_EQ(f1.get()->get(), f2.get()->get());
}

}  // namespace
}  // namespace radixlm::grammar
