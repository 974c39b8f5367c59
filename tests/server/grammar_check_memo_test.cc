#include "server/grammar_check_memo.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace radixlm::server {
namespace {

TEST(GrammarCheckMemoTest, RemembersSuccessesAndFailures) {
  GrammarCheckMemo memo;
  int runs = 0;
  auto ok = [&] { ++runs; return Status::Ok(); };
  auto bad = [&] { ++runs; return InvalidArgument("too many states"); };
  EXPECT_TRUE(memo.Check("a", ok).ok());
  EXPECT_TRUE(memo.Check("a", bad).ok());  // remembered: `bad` does not run
  const Status refused = memo.Check("b", bad);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memo.Check("b", ok).message(), "too many states");
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(memo.builds(), 2);
  EXPECT_EQ(memo.size(), 2u);
}

TEST(GrammarCheckMemoTest, ForgetsTheLeastRecentlyUsedBeyondItsCapacity) {
  GrammarCheckMemo memo(2);
  auto ok = [] { return Status::Ok(); };
  EXPECT_TRUE(memo.Check("a", ok).ok());
  EXPECT_TRUE(memo.Check("b", ok).ok());
  EXPECT_TRUE(memo.Check("a", ok).ok());  // a is now the most recent
  EXPECT_TRUE(memo.Check("c", ok).ok());  // b goes
  EXPECT_EQ(memo.size(), 2u);
  EXPECT_EQ(memo.builds(), 3);
  EXPECT_TRUE(memo.Check("a", ok).ok());
  EXPECT_EQ(memo.builds(), 3);
  EXPECT_TRUE(memo.Check("b", ok).ok());
  EXPECT_EQ(memo.builds(), 4);
}

TEST(GrammarCheckMemoTest, KeysOverTheLimitAreCheckedEveryTime) {
  GrammarCheckMemo memo;
  const std::string huge(GrammarCheckMemo::kMaxKeyBytes + 1, 'x');
  int runs = 0;
  auto ok = [&] { ++runs; return Status::Ok(); };
  EXPECT_TRUE(memo.Check(huge, ok).ok());
  EXPECT_TRUE(memo.Check(huge, ok).ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(memo.size(), 0u);
}

TEST(GrammarCheckMemoTest, ThreadsShareOneMemo) {
  GrammarCheckMemo memo(4);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const int k = (i + t) % 6;  // more keys than the capacity: evictions race with hits
        const Status s = memo.Check(std::to_string(k), [k] {
          return k % 2 ? InvalidArgument(std::to_string(k)) : Status::Ok();
        });
        if (s.ok() != (k % 2 == 0) || (!s.ok() && s.message() != std::to_string(k))) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(memo.size(), 4u);
}

}  // namespace
}  // namespace radixlm::server
