// RADIXLM_CHECK and friends: a failed check prints file:line, the condition, the values and the
// message, then aborts; a passing check evaluates nothing but its condition.
#include "util/check.h"

#include <gtest/gtest.h>

#include <string>

#include "util/status.h"

namespace radixlm {
namespace {

TEST(CheckDeathTest, FailedCheckPrintsWhereWhatAndMessage) {
  const int slot = 7;
  EXPECT_DEATH(RADIXLM_CHECK(slot < 3) << "slot " << slot << " out of range",
               "check_test\\.cc:[0-9]+: CHECK failed: slot < 3: slot 7 out of range");
  EXPECT_DEATH(RADIXLM_CHECK(false), "CHECK failed: false");
}

TEST(CheckDeathTest, ComparisonsPrintBothValues) {
  const int64_t refs = 0;
  EXPECT_DEATH(RADIXLM_CHECK_GT(refs, 0) << "node 12",
               "CHECK failed: refs > 0 \\(0 vs. 0\\): node 12");
  EXPECT_DEATH(RADIXLM_CHECK_EQ(2 + 2, 5), "2 \\+ 2 == 5 \\(4 vs. 5\\)");
  EXPECT_DEATH(RADIXLM_CHECK_NE(1, 1), "1 != 1");
  EXPECT_DEATH(RADIXLM_CHECK_LT(2, 1), "2 < 1");
  EXPECT_DEATH(RADIXLM_CHECK_LE(2, 1), "2 <= 1");
  EXPECT_DEATH(RADIXLM_CHECK_GE(1, 2), "1 >= 2");
}

TEST(CheckDeathTest, CheckOkPrintsTheStatus) {
  EXPECT_DEATH(RADIXLM_CHECK_OK(Internal("pool lost 3 pages")) << "after step 4",
               "CHECK failed: Internal\\(\"pool lost 3 pages\"\\) is OK: .*pool lost 3 pages.*"
               "after step 4");
}

TEST(Check, PassingChecksEvaluateTheirOperandsOnceAndNoMessage) {
  int evaluations = 0;
  int messages = 0;
  auto count = [&] { return ++evaluations; };
  auto message = [&] { return ++messages; };
  RADIXLM_CHECK(count() > 0) << message();
  RADIXLM_CHECK_EQ(count(), 2) << message();
  RADIXLM_CHECK_OK(Status::Ok()) << message();
  EXPECT_EQ(evaluations, 2);
  EXPECT_EQ(messages, 0);
}

TEST(Check, IsOneStatementUnderIfElse) {
  int branch = 0;
  if (branch == 1)
    RADIXLM_CHECK_EQ(branch, 1);
  else
    branch = 2;
  if (branch == 1)
    RADIXLM_CHECK(branch == 1);
  else
    branch = 3;
  EXPECT_EQ(branch, 3);
}

TEST(CheckDeathTest, DcheckFollowsTheBuild) {
  int evaluations = 0;
  auto fails = [&] { return ++evaluations < 0; };
#if RADIXLM_DCHECK_IS_ON
  EXPECT_DEATH(RADIXLM_DCHECK(fails()) << "debug only", "CHECK failed: fails\\(\\): debug only");
  EXPECT_DEATH(RADIXLM_DCHECK_EQ(1, 2), "1 == 2");
#else
  RADIXLM_DCHECK(fails()) << "never evaluated";
  RADIXLM_DCHECK_EQ(evaluations, 1);
  RADIXLM_DCHECK_OK(Internal("never evaluated"));
  EXPECT_EQ(evaluations, 0);
#endif
}

}  // namespace
}  // namespace radixlm
