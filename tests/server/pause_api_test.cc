// /pause_generation's body: the mode and its errors.
#include "server/pause_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace radixlm::server {
namespace {

using json = nlohmann::json;

TEST(PauseApiTest, ModesParseAndAbortIsTheDefault) {
  EXPECT_EQ(*ParsePauseMode(json::object()), PauseMode::kAbort);
  EXPECT_EQ(*ParsePauseMode(json{{"mode", nullptr}}), PauseMode::kAbort);
  EXPECT_EQ(*ParsePauseMode(json{{"mode", "abort"}}), PauseMode::kAbort);
  EXPECT_EQ(*ParsePauseMode(json{{"mode", "retract"}}), PauseMode::kRetract);
  EXPECT_EQ(*ParsePauseMode(json{{"mode", "in_place"}}), PauseMode::kInPlace);
}

TEST(PauseApiTest, BadBodiesNameTheProblem) {
  StatusOr<PauseMode> unknown = ParsePauseMode(json{{"mode", "inplace"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("Invalid mode: 'inplace'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("in_place"), std::string::npos);
  StatusOr<PauseMode> not_string = ParsePauseMode(json{{"mode", 1}});
  EXPECT_NE(not_string.status().message().find("'mode' must be a string"), std::string::npos);
  EXPECT_FALSE(ParsePauseMode(json::array()).ok());
}

TEST(PauseApiTest, AbortWithStatusCarriesItInTheFinishReasonJson) {
  const json j = FinishReason::Abort("Request waiting timeout reached.", 503).ToJson();
  EXPECT_EQ(j, (json{{"type", "abort"},
                     {"message", "Request waiting timeout reached."},
                     {"status_code", 503}}));
  EXPECT_FALSE(FinishReason::Abort("x").ToJson().contains("status_code"));
}

}  // namespace
}  // namespace radixlm::server
