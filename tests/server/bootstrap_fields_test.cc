#include "server/bootstrap_fields.h"

#include <gtest/gtest.h>

namespace radixlm::server {
namespace {

using nlohmann::json;

std::vector<GenerateRequest> OnePrompt() {
  GenerateRequest r;
  r.text = "Hello";
  r.sampling_params.max_new_tokens = 32;
  return {r};
}

json PairedBody() {
  return {{"text", "Hello"},
          {"bootstrap_host", "10.0.0.7"},
          {"bootstrap_port", 8998},
          {"bootstrap_room", uint64_t{9223372036854775807ull}}};
}

TEST(BootstrapFieldsTest, APlainServerIgnoresThem) {
  ServerConfig config;
  auto requests = OnePrompt();
  ASSERT_TRUE(ApplyBootstrapFields(PairedBody(), config, &requests).ok());
  EXPECT_FALSE(requests[0].export_kv_room.has_value());
  EXPECT_FALSE(requests[0].import_kv.valid());
  EXPECT_EQ(requests[0].sampling_params.max_new_tokens, 32);
}

TEST(BootstrapFieldsTest, APrefillServerComputesOneTokenAndExportsTheRoom) {
  ServerConfig config;
  config.disaggregation_mode = "prefill";
  auto requests = OnePrompt();
  ASSERT_TRUE(ApplyBootstrapFields(PairedBody(), config, &requests).ok());
  EXPECT_EQ(requests[0].export_kv_room, uint64_t{9223372036854775807ull});
  EXPECT_EQ(requests[0].sampling_params.max_new_tokens, 1);
}

TEST(BootstrapFieldsTest, ADecodeServerFetchesFromTheNamedPrefillServer) {
  ServerConfig config;
  config.disaggregation_mode = "decode";
  std::string asked;
  config.fetch_prefix_kv = [&](const std::string& host, int port, uint64_t room) {
    asked = host + ":" + std::to_string(port) + "/" + std::to_string(room);
    std::promise<StatusOr<PrefixKv>> p;
    p.set_value(PrefixKv{});
    return p.get_future().share();
  };
  auto requests = OnePrompt();
  ASSERT_TRUE(ApplyBootstrapFields(PairedBody(), config, &requests).ok());
  EXPECT_EQ(asked, "10.0.0.7:8998/9223372036854775807");
  EXPECT_TRUE(requests[0].import_kv.valid());
  EXPECT_EQ(requests[0].sampling_params.max_new_tokens, 32);
}

TEST(BootstrapFieldsTest, BadOrMissingFieldsAreClearErrors) {
  ServerConfig config;
  config.disaggregation_mode = "decode";
  config.fetch_prefix_kv = [](const std::string&, int, uint64_t) {
    return std::shared_future<StatusOr<PrefixKv>>();
  };
  struct Case {
    json body;
    StatusCode code;
    const char* says;
  };
  json no_room = PairedBody();
  no_room.erase("bootstrap_room");
  json null_port = PairedBody();
  null_port["bootstrap_port"] = nullptr;
  json bad_port = PairedBody();
  bad_port["bootstrap_port"] = 70000;
  json no_host = PairedBody();
  no_host.erase("bootstrap_host");
  json negative = PairedBody();
  negative["bootstrap_room"] = -1;
  json batch = PairedBody();
  batch["bootstrap_room"] = json::array({1, 2});
  const Case cases[] = {
      {no_room, StatusCode::kInvalidArgument, "bootstrap_room"},
      {null_port, StatusCode::kInvalidArgument, "bootstrap_port is null"},
      {bad_port, StatusCode::kInvalidArgument, "bootstrap_port"},
      {no_host, StatusCode::kInvalidArgument, "bootstrap_host"},
      {negative, StatusCode::kInvalidArgument, "non-negative"},
      {batch, StatusCode::kUnimplemented, "batched"},
  };
  for (const Case& c : cases) {
    auto requests = OnePrompt();
    Status status = ApplyBootstrapFields(c.body, config, &requests);
    EXPECT_EQ(status.code(), c.code) << c.body.dump() << ": " << status.message();
    EXPECT_NE(status.message().find(c.says), std::string::npos) << status.message();
  }
  auto two = OnePrompt();
  two[0].sampling_params.n = 2;
  EXPECT_EQ(ApplyBootstrapFields(PairedBody(), config, &two).code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace radixlm::server
