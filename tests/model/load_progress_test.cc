// LoadProgressThrottle: quiet for short loads, then at most every interval and fraction.
#include "model/load_progress.h"

#include <gtest/gtest.h>

namespace radixlm::model {
namespace {

LoadProgress At(double seconds, int64_t bytes_done, bool done = false) {
  return LoadProgress{.layers_done = 0,
                      .layers_total = 10,
                      .bytes_done = bytes_done,
                      .bytes_total = 1000,
                      .elapsed_s = seconds,
                      .done = done};
}

TEST(LoadProgressThrottleTest, AShortLoadReportsNothing) {
  LoadProgressThrottle throttle;
  for (int i = 1; i <= 10; ++i) EXPECT_FALSE(throttle.ShouldReport(At(0.15 * i, 100 * i)));
  EXPECT_FALSE(throttle.ShouldReport(At(1.6, 1000, /*done=*/true)));
}

TEST(LoadProgressThrottleTest, ALongLoadReportsEveryIntervalAndFractionWhicheverIsRarer) {
  LoadProgressThrottle throttle;  // quiet 2 s, then every 2 s and 10 %
  EXPECT_FALSE(throttle.ShouldReport(At(1.9, 50)));
  EXPECT_TRUE(throttle.ShouldReport(At(2.1, 60)));    // the first after the quiet time
  EXPECT_FALSE(throttle.ShouldReport(At(3.0, 400)));  // 34 %, but under 2 s since
  EXPECT_FALSE(throttle.ShouldReport(At(6.0, 150)));  // 4 s, but 9 % since
  EXPECT_TRUE(throttle.ShouldReport(At(6.5, 170)));   // both
  EXPECT_FALSE(throttle.ShouldReport(At(8.0, 900)));
  EXPECT_TRUE(throttle.ShouldReport(At(9.0, 950)));
  EXPECT_TRUE(throttle.ShouldReport(At(9.5, 1000, /*done=*/true)));  // the closing line
}

TEST(LoadProgressTest, Lines) {
  LoadProgress p = At(6.14, 512 << 10);
  p.layers_done = 3;
  p.bytes_total = 2 << 20;
  EXPECT_EQ(FormatLoadProgress(p), "loading weights: 3/10 layers, 0.5/2.0 MiB (25%), 6.1 s");
  p.done = true;
  EXPECT_EQ(FormatLoadProgress(p), "loaded weights: 10 layers, 2.0 MiB in 6.1 s");
}

}  // namespace
}  // namespace radixlm::model
