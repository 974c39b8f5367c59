#include "util/status.h"

#include <gtest/gtest.h>

namespace radixlm {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd input " + std::to_string(x));
  return x / 2;
}

Status UseHalf(int x, int* out) {
  RADIXLM_ASSIGN_OR_RETURN(int h, Half(x));
  *out = h;
  return Status::Ok();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status st = NotFound("key 'x'");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.ToString(), "NotFound: key 'x'");
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = -1;
  EXPECT_TRUE(UseHalf(8, &out).ok());
  EXPECT_EQ(out, 4);
  Status st = UseHalf(3, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "odd input 3");
}

}  // namespace
}  // namespace radixlm
