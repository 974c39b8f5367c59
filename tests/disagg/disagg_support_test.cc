#include "disagg/disagg_support.h"

#include <gtest/gtest.h>

namespace radixlm::disagg {
namespace {

TEST(DisaggSupportTest, OnlyUcxIsAcceptedAndOnlyWhenBuilt) {
  const Status mooncake = CheckTransferBackend("mooncake");
  EXPECT_EQ(mooncake.code(), StatusCode::kUnimplemented);
  EXPECT_NE(mooncake.message().find("mooncake"), std::string::npos);
  const Status ucx = CheckTransferBackend("ucx");
  if (UcxBuilt()) {
    EXPECT_TRUE(ucx.ok()) << ucx.ToString();
  } else {
    EXPECT_EQ(ucx.code(), StatusCode::kUnimplemented);
    EXPECT_NE(ucx.message().find("libucx-dev"), std::string::npos);
  }
}

}  // namespace
}  // namespace radixlm::disagg
