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
  json bad_entry = PairedBody();
  bad_entry["bootstrap_room"] = json::array({"7"});
  const Case cases[] = {
      {no_room, StatusCode::kInvalidArgument, "bootstrap_room"},
      {null_port, StatusCode::kInvalidArgument, "bootstrap_port is null"},
      {bad_port, StatusCode::kInvalidArgument, "bootstrap_port"},
      {no_host, StatusCode::kInvalidArgument, "bootstrap_host"},
      {negative, StatusCode::kInvalidArgument, "non-negative"},
      {bad_entry, StatusCode::kInvalidArgument, "bootstrap_room[0]"},
  };
  for (const Case& c : cases) {
    auto requests = OnePrompt();
    Status status = ApplyBootstrapFields(c.body, config, &requests);
    EXPECT_EQ(status.code(), c.code) << c.body.dump() << ": " << status.message();
    EXPECT_NE(status.message().find(c.says), std::string::npos) << status.message();
  }
}

std::vector<GenerateRequest> Prompts(size_t count, int32_t n) {
  std::vector<GenerateRequest> requests;
  for (size_t i = 0; i < count; ++i) {
    GenerateRequest r;
    r.text = "Hello " + std::to_string(i);
    r.sampling_params.max_new_tokens = 32;
    r.sampling_params.n = n;
    requests.push_back(r);
  }
  return requests;
}

// A decode server's fetch_prefix_kv that records "host:port/room" per fetch.
ServerConfig RecordingDecode(std::vector<std::string>* asked) {
  ServerConfig config;
  config.disaggregation_mode = "decode";
  config.fetch_prefix_kv = [asked](const std::string& host, int port, uint64_t room) {
    asked->push_back(host + ":" + std::to_string(port) + "/" + std::to_string(room));
    std::promise<StatusOr<PrefixKv>> p;
    p.set_value(PrefixKv{});
    return p.get_future().share();
  };
  return config;
}

TEST(BootstrapFieldsTest, NSamplesShareOnePromptTransfer) {
  // The prefill server computes the prompt once (one sample); the decode server fetches it
  // once and keeps n.
  ServerConfig prefill;
  prefill.disaggregation_mode = "prefill";
  auto requests = Prompts(1, 3);
  ASSERT_TRUE(ApplyBootstrapFields(PairedBody(), prefill, &requests).ok());
  EXPECT_EQ(requests[0].sampling_params.n, 1);
  EXPECT_EQ(requests[0].export_kv_room, uint64_t{9223372036854775807ull});

  std::vector<std::string> asked;
  requests = Prompts(1, 3);
  ASSERT_TRUE(ApplyBootstrapFields(PairedBody(), RecordingDecode(&asked), &requests).ok());
  EXPECT_EQ(asked, std::vector<std::string>{"10.0.0.7:8998/9223372036854775807"});
  EXPECT_EQ(requests[0].sampling_params.n, 3);
  EXPECT_TRUE(requests[0].import_kv.valid());
}

TEST(BootstrapFieldsTest, ABatchGivesEachPromptItsOwnRoom) {
  json body = {{"input_ids", json::array({json::array({1, 2}), json::array({3, 4})})},
               {"bootstrap_host", json::array({"10.0.0.7", "10.0.0.8"})},
               {"bootstrap_port", json::array({8998, 8999})},
               {"bootstrap_room", json::array({11, 22})}};
  std::vector<std::string> asked;
  auto requests = Prompts(2, 1);
  ASSERT_TRUE(ApplyBootstrapFields(body, RecordingDecode(&asked), &requests).ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"10.0.0.7:8998/11", "10.0.0.8:8999/22"}));

  ServerConfig prefill;
  prefill.disaggregation_mode = "prefill";
  requests = Prompts(2, 1);
  ASSERT_TRUE(ApplyBootstrapFields(body, prefill, &requests).ok());
  EXPECT_EQ(requests[0].export_kv_room, uint64_t{11});
  EXPECT_EQ(requests[1].export_kv_room, uint64_t{22});
}

TEST(BootstrapFieldsTest, OneRoomForABatchIsExpandedAsSglangDoes) {
  json body = PairedBody();
  body["bootstrap_room"] = uint64_t{18446744073709551615ull};  // 2^64 - 1: the next one wraps
  std::vector<std::string> asked;
  auto requests = Prompts(2, 1);
  ASSERT_TRUE(ApplyBootstrapFields(body, RecordingDecode(&asked), &requests).ok());
  EXPECT_EQ(asked,
            (std::vector<std::string>{"10.0.0.7:8998/18446744073709551615", "10.0.0.7:8998/0"}));
}

TEST(BootstrapFieldsTest, ARoomPerSampleUsesTheFirstOfEachPrompt) {
  // smg sends n rooms for a chat request with n > 1: the prompt's KV travels under the first.
  json body = PairedBody();
  body["bootstrap_room"] = json::array({5, 6, 7});
  body["bootstrap_host"] = json::array({"10.0.0.7", "10.0.0.7", "10.0.0.7"});
  body["bootstrap_port"] = json::array({8998, 8998, 8998});
  std::vector<std::string> asked;
  auto requests = Prompts(1, 3);
  ASSERT_TRUE(ApplyBootstrapFields(body, RecordingDecode(&asked), &requests).ok());
  EXPECT_EQ(asked, std::vector<std::string>{"10.0.0.7:8998/5"});
}

TEST(BootstrapFieldsTest, BatchErrorsStartNoFetch) {
  std::vector<std::string> asked;
  const ServerConfig config = RecordingDecode(&asked);
  json too_few = PairedBody();
  too_few["bootstrap_room"] = json::array({4});
  auto requests = Prompts(2, 1);
  Status status = ApplyBootstrapFields(too_few, config, &requests);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("fewer than the request's 2 prompts"), std::string::npos)
      << status.message();

  json same_room = PairedBody();
  same_room["bootstrap_room"] = json::array({4, 4});
  requests = Prompts(2, 1);
  status = ApplyBootstrapFields(same_room, config, &requests);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("two prompts"), std::string::npos) << status.message();

  json short_ports = PairedBody();
  short_ports["bootstrap_room"] = json::array({4, 5});
  short_ports["bootstrap_port"] = json::array({8998});
  requests = Prompts(2, 1);
  status = ApplyBootstrapFields(short_ports, config, &requests);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bootstrap_port has 1"), std::string::npos) << status.message();
  EXPECT_TRUE(asked.empty());
}

}  // namespace
}  // namespace radixlm::server
