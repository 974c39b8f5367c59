// The whole HTTP path over real sockets: HttpServer + Engine on the fake model runner and
// codec. Covers generation (plain, streamed, OpenAI), keep-alive, the error statuses, the API
// key, and that a client disconnecting mid-stream aborts its request.
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "testing/fake_model_runner.h"
#include "testing/fake_token_text.h"

namespace radixlm::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using json = nlohmann::json;

struct Reply {
  int status = 0;
  std::string body;
  std::string content_type;
  json Json() const { return json::parse(body); }
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ServerConfig()); }

  // listener: a socket opened earlier to accept on (default: the server binds port 0 itself).
  void StartServer(ServerConfig config, std::chrono::microseconds forward_delay = {},
                   ListenSocket listener = {}) {
    server_.reset();
    engine_.reset();
    EngineConfig ec;
    ec.max_total_tokens = 4096;
    ec.chunked_prefill_size = 128;
    FakeModelConfig fm;
    fm.vocab_size = FakeTokenTextCodec::kVocabSize;
    fm.context_length = 1024;
    fm.kv_slots = ec.max_total_tokens + 1;
    fm.forward_delay = forward_delay;
    ModelInfo info;
    info.model_path = "/models/fake.gguf";
    info.arch = "fake";  // no chat template: chat requests are refused
    auto engine =
        Engine::Create(ec, std::make_unique<FakeModelRunner>(fm),
                       ModelAssets::FromParts(std::make_unique<FakeTokenTextCodec>(), info));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(*engine);
    config.port = listener.is_open() ? listener.port() : 0;
    config.io_threads = 2;
    auto server = HttpServer::Create(config, engine_.get());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    const Status started =
        listener.is_open() ? server_->Start(std::move(listener)) : server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  void TearDown() override {
    server_.reset();
    engine_.reset();
  }

  // receive_buffer > 0: a small receive window, set before connecting (a client that reads
  // slowly or not at all).
  tcp::socket Connect(int receive_buffer = 0) {
    tcp::socket socket(ioc_);
    socket.open(tcp::v4());
    if (receive_buffer > 0) {
      socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
    }
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()));
    return socket;
  }

  // Everything the server sends until it closes the connection; fails the test if it is still
  // open after 60 s without sending anything.
  static std::string ReadUntilClosed(tcp::socket& socket) {
    timeval timeout{60, 0};
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    std::string data;
    char chunk[65536];
    beast::error_code ec;
    while (true) {
      const size_t n = socket.read_some(net::buffer(chunk), ec);
      if (ec) {
        EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
        return data;
      }
      data.append(chunk, n);
    }
  }

  void WaitForLiveRequests(int64_t n) {
    for (int i = 0; i < 2000 && engine_->GetStats().live_requests < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GE(engine_->GetStats().live_requests, n);
  }

  static std::string RawRequest(const std::string& method, const std::string& path,
                                const std::string& body, const std::string& extra = "") {
    return method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " +
           "application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
           "\r\n" + body;
  }

  static Reply ReadReply(tcp::socket& socket, beast::flat_buffer& buffer) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(socket, buffer, parser);
    Reply reply;
    reply.status = parser.get().result_int();
    reply.body = parser.get().body();
    reply.content_type = std::string(parser.get()[http::field::content_type]);
    return reply;
  }

  Reply Send(const std::string& method, const std::string& path, const std::string& body = "",
             const std::string& extra = "") {
    tcp::socket socket = Connect();
    net::write(socket, net::buffer(RawRequest(method, path, body, extra)));
    beast::flat_buffer buffer;
    return ReadReply(socket, buffer);
  }

  // The last data event of a whole SSE body that ends with "data: [DONE]".
  static json LastStreamEvent(const std::string& body) {
    const size_t done = body.rfind("data: [DONE]");
    const size_t last = body.rfind("data: {", done);
    return json::parse(body.substr(last + 6, done - last - 8));
  }

  int64_t LiveRequestsAfterSettling() {
    for (int i = 0; i < 3000; ++i) {
      if (engine_->GetStats().live_requests == 0) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return engine_->GetStats().live_requests;
  }

  net::io_context ioc_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<HttpServer> server_;
};

const char* kGreedy =
    R"({"input_ids": [2, 3, 4, 5], "sampling_params": {"max_new_tokens": 4, "temperature": 0,
        "ignore_eos": true}})";

// `radixlm serve` claims its port before loading the model: a client that connects meanwhile
// waits in the listen backlog and is answered once the server starts.
TEST_F(HttpServerTest, ServesAConnectionMadeBeforeItStartedOnItsListenSocket) {
  server_.reset();
  auto listener = ListenSocket::Open("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  const int port = listener->port();
  tcp::socket early(ioc_);
  early.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  net::write(early, net::buffer(RawRequest("POST", "/generate", kGreedy)));

  StartServer(ServerConfig(), {}, std::move(*listener));
  EXPECT_EQ(server_->port(), port);
  beast::flat_buffer buffer;
  const Reply reply = ReadReply(early, buffer);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["meta_info"]["completion_tokens"], 4);
}

TEST_F(HttpServerTest, GenerateReturnsSglangShape) {
  Reply reply = Send("POST", "/generate", kGreedy);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json j = reply.Json();
  EXPECT_EQ(j["output_ids"].size(), 4u);
  EXPECT_TRUE(j["text"].is_string());
  EXPECT_EQ(j["meta_info"]["prompt_tokens"], 4);
  EXPECT_EQ(j["meta_info"]["completion_tokens"], 4);
  EXPECT_EQ(j["meta_info"]["finish_reason"]["type"], "length");
  EXPECT_TRUE(j["meta_info"]["e2e_latency"].is_number());
  EXPECT_TRUE(j["meta_info"].contains("cached_tokens"));
}

TEST_F(HttpServerTest, BatchAndNReturnPromptMajorLists) {
  Reply reply = Send("POST", "/generate",
                     R"({"text": ["ab", "cd"], "sampling_params": {"max_new_tokens": 2, "n": 2,
                         "ignore_eos": true}})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json j = reply.Json();
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0]["meta_info"]["id"], j[1]["meta_info"]["id"]);
  EXPECT_NE(j[1]["meta_info"]["id"], j[2]["meta_info"]["id"]);
}

TEST_F(HttpServerTest, StreamingSendsSseEventsThenDone) {
  json body = json::parse(kGreedy);
  body["stream"] = true;
  Reply reply = Send("POST", "/generate", body.dump());
  ASSERT_EQ(reply.status, 200);
  EXPECT_NE(reply.content_type.find("text/event-stream"), std::string::npos);
  ASSERT_GE(reply.body.size(), 14u);
  EXPECT_EQ(reply.body.substr(reply.body.size() - 14), "data: [DONE]\n\n");
  // Cumulative: the last data event has all 4 ids.
  const json final_event = LastStreamEvent(reply.body);
  EXPECT_EQ(final_event["output_ids"].size(), 4u);
  EXPECT_EQ(final_event["meta_info"]["finish_reason"]["type"], "length");
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  tcp::socket socket = Connect();
  beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    net::write(socket, net::buffer(RawRequest("POST", "/generate", kGreedy)));
    Reply reply = ReadReply(socket, buffer);
    EXPECT_EQ(reply.status, 200) << reply.body;
  }
  net::write(socket, net::buffer(RawRequest("GET", "/health", "")));
  EXPECT_EQ(ReadReply(socket, buffer).status, 200);
}

TEST_F(HttpServerTest, ErrorsAreJsonWithTheRightStatus) {
  struct Case {
    const char* method;
    const char* path;
    std::string body;
    int status;
  };
  const Case cases[] = {
      {"GET", "/nope", "", 404},
      {"GET", "/generate", "", 405},
      {"POST", "/generate", "{bad json", 400},
      {"POST", "/generate", "", 400},
      {"POST", "/generate", R"({"text": 3})", 400},
      {"POST", "/generate", R"({"input_ids": [2, 999]})", 400},
      {"POST", "/generate", R"({"input_ids": [2], "sampling_params": {"top_p": 0}})", 400},
      {"POST", "/generate", R"({"input_ids": )" + json(std::vector<int>(1100, 3)).dump() + "}",
       400},
      {"POST", "/v1/completions", R"({"prompt": "ab", "n": 0})", 400},
      {"POST", "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}]})", 400},
      {"POST", "/abort_request", R"({})", 400},
  };
  for (const Case& c : cases) {
    Reply reply = Send(c.method, c.path, c.body);
    EXPECT_EQ(reply.status, c.status) << c.method << " " << c.path << " " << c.body.substr(0, 80);
    const json j = json::parse(reply.body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << reply.body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  }
  EXPECT_EQ(Send("POST", "/generate", kGreedy).status, 200);  // unaffected
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  ServerConfig config;
  config.max_body_bytes = 1024;
  StartServer(config);
  Reply reply = Send("POST", "/generate", std::string(4096, ' '));
  EXPECT_EQ(reply.status, 413);
  EXPECT_TRUE(reply.Json().contains("error"));
  EXPECT_EQ(Send("POST", "/generate", kGreedy).status, 200);
}

TEST_F(HttpServerTest, ApiKeyIsRequiredExceptForHealth) {
  ServerConfig config;
  config.api_key = "k";
  StartServer(config);
  EXPECT_EQ(Send("POST", "/generate", kGreedy).status, 401);
  EXPECT_EQ(Send("POST", "/generate", kGreedy, "Authorization: Bearer x\r\n").status, 401);
  EXPECT_EQ(Send("POST", "/generate", kGreedy, "Authorization: Bearer k\r\n").status, 200);
  EXPECT_EQ(Send("GET", "/health").status, 200);
}

TEST_F(HttpServerTest, OpenAiCompletion) {
  Reply reply = Send("POST", "/v1/completions",
                     R"({"model": "fake", "prompt": "ab", "max_tokens": 3, "n": 2,
                         "logprobs": 1, "ignore_eos": true})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json j = reply.Json();
  EXPECT_EQ(j["object"], "text_completion");
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["choices"][0]["logprobs"]["tokens"].size(), 3u);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_TRUE(j["usage"]["prompt_tokens_details"].contains("cached_tokens"));
}

// Characters (code points) of a JSON string.
size_t Chars(const json& text) {
  const std::string s = text.get<std::string>();
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// echo with logprobs: the prompt's tokens come first, the first with a null logprob, then the
// generated ones; text_offset counts the characters of the tokens' texts. Streamed, the prompt's
// entries ride on each sample's first event.
TEST_F(HttpServerTest, OpenAiCompletionEchoWithLogprobsScoresThePrompt) {
  const char* request = R"({"model": "fake", "prompt": [2, 3, 4, 5], "max_tokens": 2, "n": 2,
                            "echo": true, "logprobs": 1, "ignore_eos": true)";
  Reply reply = Send("POST", "/v1/completions", std::string(request) + "}");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json j = reply.Json();
  ASSERT_EQ(j["choices"].size(), 2u);
  for (const json& choice : j["choices"]) {
    const json& lp = choice["logprobs"];
    ASSERT_EQ(lp["tokens"].size(), 6u) << lp;
    EXPECT_TRUE(lp["token_logprobs"][0].is_null()) << lp;
    EXPECT_TRUE(lp["top_logprobs"][0].is_null()) << lp;
    size_t offset = 0;
    for (size_t i = 0; i < 6; ++i) {
      if (i > 0) {
        EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0) << lp;
        EXPECT_EQ(lp["top_logprobs"][i].size(), 1u) << lp;
      }
      EXPECT_EQ(lp["text_offset"][i], offset) << lp;
      offset += Chars(lp["tokens"][i]);
    }
  }
  // The prompt's logprobs do not depend on the sample.
  EXPECT_EQ(j["choices"][0]["logprobs"]["token_logprobs"][3],
            j["choices"][1]["logprobs"]["token_logprobs"][3]);
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);

  // max_tokens 0: the prompt alone is scored (a loglikelihood request).
  Reply scored = Send("POST", "/v1/completions",
                      R"({"prompt": [2, 3, 4, 5], "max_tokens": 0, "echo": true, "logprobs": 0})");
  ASSERT_EQ(scored.status, 200) << scored.body;
  const json slp = scored.Json()["choices"][0]["logprobs"];
  ASSERT_EQ(slp["token_logprobs"].size(), 4u) << slp;
  EXPECT_EQ(slp["token_logprobs"][3], j["choices"][0]["logprobs"]["token_logprobs"][3]);
  EXPECT_TRUE(slp["top_logprobs"][3].is_null()) << slp;

  Reply streamed = Send("POST", "/v1/completions", std::string(request) + R"(, "stream": true})");
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::map<int, std::vector<json>> entries;  // per choice: (token, logprob, offset)
  for (size_t at = streamed.body.find("data: {"); at != std::string::npos;
       at = streamed.body.find("data: {", at + 1)) {
    const json event =
        json::parse(streamed.body.substr(at + 6, streamed.body.find('\n', at) - at - 6));
    for (const json& choice : event["choices"]) {
      const json& lp = choice["logprobs"];
      for (size_t i = 0; i < lp["tokens"].size(); ++i) {
        entries[choice["index"].get<int>()].push_back(
            {lp["tokens"][i], lp["token_logprobs"][i], lp["text_offset"][i]});
      }
    }
  }
  ASSERT_EQ(entries.size(), 2u) << streamed.body;
  for (const auto& [index, list] : entries) {
    ASSERT_EQ(list.size(), 6u) << streamed.body;
    EXPECT_TRUE(list[0][1].is_null());
    size_t offset = 0;
    for (const json& e : list) {
      EXPECT_EQ(e[2], offset) << streamed.body;
      offset += Chars(e[0]);
    }
    EXPECT_EQ(list[3][1], j["choices"][0]["logprobs"]["token_logprobs"][3]);
  }
}

TEST_F(HttpServerTest, TokenizeCountsWhatGenerateComputes) {
  const std::string text = "the cat sat";
  Reply tok = Send("POST", "/tokenize", json{{"prompt", text}}.dump());
  ASSERT_EQ(tok.status, 200) << tok.body;
  const json t = tok.Json();
  Reply gen = Send("POST", "/generate",
                   json{{"text", text}, {"sampling_params", {{"max_new_tokens", 0}}}}.dump());
  ASSERT_EQ(gen.status, 200) << gen.body;
  EXPECT_EQ(t["count"], gen.Json()["meta_info"]["prompt_tokens"]);
  EXPECT_EQ(t["tokens"].size(), t["count"].get<size_t>());
  EXPECT_EQ(t["max_model_len"], 1024);

  // A list of prompts gives lists; /v1/detokenize turns the ids back into the text.
  Reply batch = Send("POST", "/v1/tokenize", json{{"prompt", {text, "ab"}}}.dump());
  ASSERT_EQ(batch.status, 200) << batch.body;
  ASSERT_EQ(batch.Json()["tokens"].size(), 2u);
  EXPECT_EQ(batch.Json()["tokens"][0], t["tokens"]);
  EXPECT_EQ(batch.Json()["count"][1], batch.Json()["tokens"][1].size());
  Reply detok = Send("POST", "/v1/detokenize", json{{"tokens", t["tokens"]}}.dump());
  ASSERT_EQ(detok.status, 200) << detok.body;
  EXPECT_EQ(detok.Json()["text"], text);
  Reply detok_batch = Send("POST", "/detokenize", json{{"tokens", batch.Json()["tokens"]}}.dump());
  ASSERT_EQ(detok_batch.status, 200) << detok_batch.body;
  EXPECT_EQ(detok_batch.Json()["text"], json::array({text, "ab"}));
}

TEST_F(HttpServerTest, TokenizeRejectsBadInputWith400) {
  struct Case {
    const char* path;
    const char* body;
    const char* message_part;
  };
  const Case cases[] = {
      {"/tokenize", R"({})", "exactly one of 'prompt' or 'messages'"},
      {"/tokenize", R"({"prompt": "a", "messages": []})", "exactly one of"},
      {"/tokenize", R"({"prompt": 5})", "'prompt' must be a string"},
      {"/tokenize", R"({"prompt": ["a", 1]})", "'prompt' must be a string"},
      {"/tokenize", R"({"prompt": "a", "add_special_tokens": "yes"})", "add_special_tokens"},
      {"/tokenize", R"({"messages": [{"role": "user", "content": "hi"}]})", "chat template"},
      {"/tokenize", R"({"messages": [{"role": "robot", "content": "hi"}]})", "role must be one of"},
      {"/tokenize", R"({"messages": []})", "messages must not be empty"},
      {"/tokenize", R"({"messages": [{"role": "user", "content": "hi"}], "tools": 5})", "tools"},
      {"/tokenize", R"({"prompt": "a", "tools": []})", "'tools' goes with 'messages'"},
      {"/detokenize", R"({"tokens": "abc"})", "'tokens' must be a list"},
      {"/detokenize", R"({"tokens": [1, -1]})", "token id -1 is not in the vocabulary"},
      {"/detokenize", R"({"tokens": [1, 100000000]})", "not in the vocabulary"},
      {"/detokenize", R"({"tokens": [[1], 2]})", "must not mix"},
      {"/tokenize", R"({"prompt": )", "malformed JSON"},
  };
  for (const Case& c : cases) {
    Reply reply = Send("POST", c.path, c.body);
    EXPECT_EQ(reply.status / 100, 4) << c.body << " -> " << reply.body;
    EXPECT_NE(reply.body.find(c.message_part), std::string::npos) << c.body << " -> " << reply.body;
  }
}

TEST_F(HttpServerTest, InfoMetricsAndFlush) {
  Reply info = Send("GET", "/get_model_info");
  ASSERT_EQ(info.status, 200);
  EXPECT_EQ(info.Json()["model_path"], "/models/fake.gguf");
  EXPECT_EQ(info.Json()["is_generation"], true);
  Reply server = Send("GET", "/get_server_info");
  ASSERT_EQ(server.status, 200);
  EXPECT_EQ(server.Json()["pool_size"], 4096);
  // Resident bytes by kind: the fake runner holds no weights, KV or scratch of its own; the
  // process's resident set is real.
  const json memory = server.Json()["memory"];
  for (const char* key : {"weights_bytes", "kv_pool_bytes", "scratch_bytes", "rss_bytes"}) {
    ASSERT_TRUE(memory.contains(key) && memory[key].is_number_integer()) << key;
  }
  EXPECT_EQ(memory["weights_bytes"], 0);
  EXPECT_GT(memory["rss_bytes"].get<int64_t>(), 0);
  Reply metrics = Send("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("radixlm:num_queue_reqs"), std::string::npos);
  EXPECT_NE(metrics.body.find("radixlm:memory_bytes{model_name=\"fake\",kind=\"rss\"} "),
            std::string::npos);
  EXPECT_EQ(Send("POST", "/flush_cache").status, 200);
  EXPECT_EQ(Send("GET", "/v1/models").Json()["data"][0]["id"], "fake");
}

TEST_F(HttpServerTest, ServedNameDefaultsToTheFileNameWithoutGguf) {
  EXPECT_EQ(Send("GET", "/get_model_info").Json()["served_model_name"], "fake");
  EXPECT_EQ(Send("GET", "/server_info").Json()["served_model_name"], "fake");
  EXPECT_EQ(Send("GET", "/v1/models/fake").status, 200);
  ServerConfig named;
  named.served_model_name = "org/model";
  StartServer(named);
  EXPECT_EQ(Send("GET", "/v1/models").Json()["data"][0]["id"], "org/model");
}

TEST_F(HttpServerTest, LoadsReportAndItsQueryErrors) {
  Reply reply = Send("GET", "/v1/loads?include=core,disagg,queues,memory");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json report = reply.Json();
  ASSERT_EQ(report["loads"].size(), 1u);
  EXPECT_EQ(report["loads"][0]["max_total_num_tokens"], 4096);
  EXPECT_EQ(report["loads"][0]["num_running_reqs"], 0);
  EXPECT_EQ(report["loads"][0]["token_usage"], 0.0);
  EXPECT_TRUE(report["timestamp"].is_string());
  EXPECT_EQ(Send("GET", "/v1/loads?dp_rank=0").status, 200);
  Reply prometheus = Send("GET", "/v1/loads?format=prometheus");
  ASSERT_EQ(prometheus.status, 200);
  EXPECT_NE(prometheus.body.find("sglang_max_total_num_tokens{dp_rank=\"0\"} 4096"),
            std::string::npos)
      << prometheus.body;
  for (const auto& [query, param] : std::vector<std::pair<std::string, std::string>>{
           {"include=core,gpu", "include"}, {"dp_rank=1", "dp_rank"}, {"format=xml", "format"}}) {
    Reply bad = Send("GET", "/v1/loads?" + query);
    EXPECT_EQ(bad.status, 400) << query;
    EXPECT_EQ(bad.Json()["error"]["param"], param) << bad.body;
  }
}

TEST_F(HttpServerTest, DisconnectMidStreamAbortsTheRequest) {
  const json baseline = Send("GET", "/get_server_info").Json();
  for (int i = 0; i < 5; ++i) {
    tcp::socket socket = Connect();
    net::write(socket,
               net::buffer(RawRequest("POST", "/generate",
                                      R"({"input_ids": [2, 3, 4], "stream": true, "sampling_params":
                               {"max_new_tokens": 900, "ignore_eos": true}})")));
    char head[64];
    net::read(socket, net::buffer(head));  // the stream has started
    socket.close();
  }
  EXPECT_EQ(LiveRequestsAfterSettling(), 0);
  Send("POST", "/flush_cache");
  const json after = Send("GET", "/get_server_info").Json();
  EXPECT_EQ(after["pool_free_tokens"].get<int64_t>() + after["tree_tokens"].get<int64_t>(),
            baseline["pool_free_tokens"].get<int64_t>() + baseline["tree_tokens"].get<int64_t>());
}

TEST_F(HttpServerTest, AbortRequestEndsAStreamWithAbort) {
  tcp::socket socket = Connect();
  net::write(socket,
             net::buffer(RawRequest("POST", "/generate",
                                    R"({"input_ids": [2, 3], "rid": "victim", "sampling_params":
                             {"max_new_tokens": 1000, "ignore_eos": true}})")));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Reply abort = Send("POST", "/abort_request", R"({"rid": "victim"})");
  EXPECT_EQ(abort.status, 200);
  beast::flat_buffer buffer;
  Reply reply = ReadReply(socket, buffer);
  ASSERT_EQ(reply.status, 200);
  const std::string type = reply.Json()["meta_info"]["finish_reason"]["type"];
  EXPECT_TRUE(type == "abort" || type == "length");
}

TEST_F(HttpServerTest, AbortAllEndsEveryLiveRequest) {
  std::vector<tcp::socket> sockets;
  for (int i = 0; i < 3; ++i) {
    sockets.push_back(Connect());
    net::write(sockets.back(), net::buffer(RawRequest("POST", "/generate",
                                                      R"({"input_ids": [2, 3], "sampling_params":
                                          {"max_new_tokens": 1000, "ignore_eos": true}})")));
  }
  for (int i = 0; i < 200 && engine_->GetStats().live_requests < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Reply abort = Send("POST", "/abort_request", R"({"abort_all": true})");
  ASSERT_EQ(abort.status, 200);
  for (tcp::socket& socket : sockets) {
    beast::flat_buffer buffer;
    Reply reply = ReadReply(socket, buffer);
    ASSERT_EQ(reply.status, 200);
    const std::string type = reply.Json()["meta_info"]["finish_reason"]["type"];
    EXPECT_TRUE(type == "abort" || type == "length");
  }
  EXPECT_EQ(LiveRequestsAfterSettling(), 0);
}

// Cumulative native events with 20 top logprobs per token grow by about 1 KB a token: a client
// that never reads fills the socket buffers within a few hundred tokens.
const char* kHeavyStream =
    R"({"input_ids": [2, 3], "stream": true, "return_logprob": true, "top_logprobs_num": 20,
        "return_text_in_logprobs": true,
        "sampling_params": {"max_new_tokens": 1000, "ignore_eos": true}})";

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} << 10;
}

TEST_F(HttpServerTest, AStreamWhoseClientDoesNotReadIsAbortedOnceItsBufferIsFull) {
  ServerConfig config;
  config.max_stream_buffer_bytes = 64 << 10;
  // No forward delay: the engine finishes all 1000 tokens long before the connection has
  // written them, so its output waits in the stream; what is formatted and queued for the
  // client must still stop near the bound (all 1000 cumulative events are about 300 MB).
  StartServer(config);
  const int64_t peak_before = PeakRssBytes();
  tcp::socket socket = Connect(/*receive_buffer=*/4096);
  net::write(socket, net::buffer(RawRequest("POST", "/generate", kHeavyStream)));
  const std::string received = ReadUntilClosed(socket);
  EXPECT_EQ(received.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(received.find("data: [DONE]"), std::string::npos);  // cut off, not finished
  EXPECT_EQ(LiveRequestsAfterSettling(), 0);
  EXPECT_LT(PeakRssBytes() - peak_before, int64_t{64} << 20);
  EXPECT_EQ(Send("POST", "/generate", kGreedy).status, 200);
}

TEST_F(HttpServerTest, AWriteThatMakesNoProgressTimesOut) {
  ServerConfig config;
  config.max_stream_buffer_bytes = size_t{1} << 30;  // only the write timeout can stop it
  config.write_timeout_s = 1;
  // Slow enough that the socket buffers fill long before the 1000 tokens are done.
  StartServer(config, std::chrono::milliseconds(10));
  tcp::socket socket = Connect(/*receive_buffer=*/4096);
  net::write(socket, net::buffer(RawRequest("POST", "/generate", kHeavyStream)));
  WaitForLiveRequests(1);
  EXPECT_EQ(LiveRequestsAfterSettling(), 0);
  // Ended by the timeout (an abort), not by running its 1000 tokens (10 s) to the end: the
  // formatting of its ever larger events must not hold the connection's strand so long that
  // the timeout's handler waits behind it.
  EXPECT_EQ(engine_->GetStats().scheduler.aborted_requests, 1);
  const std::string received = ReadUntilClosed(socket);
  EXPECT_EQ(received.find("data: [DONE]"), std::string::npos);
}

TEST_F(HttpServerTest, AStreamLargerThanOneWakeUpFormatsArrivesWhole) {
  ServerConfig config;
  config.max_stream_buffer_bytes = size_t{1} << 30;
  // No forward delay: all 150 tokens wait in the stream before the connection formats the
  // first. Their cumulative events (about 7 MB) take many wake-ups of at most 1 MB each, the
  // last ones after the generation has ended and no notifier will fire again.
  StartServer(config);
  json body = json::parse(kHeavyStream);
  body["sampling_params"]["max_new_tokens"] = 150;
  const Reply reply = Send("POST", "/generate", body.dump());
  ASSERT_EQ(reply.status, 200);
  ASSERT_GT(reply.body.size(), size_t{4} << 20);
  EXPECT_EQ(reply.body.substr(reply.body.size() - 14), "data: [DONE]\n\n");
  const json final_event = LastStreamEvent(reply.body);
  EXPECT_EQ(final_event["output_ids"].size(), 150u);
  EXPECT_EQ(final_event["meta_info"]["finish_reason"]["type"], "length");
}

// A server with a 600 s drain deadline and 2 ms steps, one /generate of `max_new_tokens`
// running on `running`, and a drain (RequestStop, then WaitForShutdown) begun on a thread the
// caller joins.
class HttpServerDrainTest : public HttpServerTest {
 protected:
  void StartDrainWithARunningRequest(int max_new_tokens) {
    ServerConfig config;
    config.graceful_shutdown_timeout_s = 600;
    StartServer(config, std::chrono::milliseconds(2));
    running_.emplace(Connect());
    const std::string body = R"({"input_ids": [2, 3], "sampling_params": {"max_new_tokens": )" +
                             std::to_string(max_new_tokens) + R"(, "ignore_eos": true}})";
    net::write(*running_, net::buffer(RawRequest("POST", "/generate", body)));
    WaitForLiveRequests(1);
    stopper_ = std::thread([this] {
      server_->RequestStop();
      server_->WaitForShutdown();
    });
  }

  void TearDown() override {
    if (stopper_.joinable()) stopper_.join();
    HttpServerTest::TearDown();
  }

  // The running request's reply (it must be a 200 whatever its finish).
  json RunningReply() {
    beast::flat_buffer buffer;
    const Reply reply = ReadReply(*running_, buffer);
    EXPECT_EQ(reply.status, 200) << reply.body;
    return reply.status == 200 ? reply.Json() : json();
  }

  std::optional<tcp::socket> running_;
  std::thread stopper_;
};

TEST_F(HttpServerDrainTest, ShutdownFinishesInFlightRequestsAndRefusesNewOnes) {
  StartDrainWithARunningRequest(600);
  ASSERT_FALSE(HasFatalFailure());
  Reply refused;
  for (int i = 0; i < 1000 && refused.status != 503; ++i) refused = Send("GET", "/health");
  EXPECT_EQ(refused.status, 503);
  EXPECT_NE(refused.body.find("shutting down"), std::string::npos);
  const json reply = RunningReply();
  EXPECT_EQ(reply["meta_info"]["finish_reason"]["type"], "length");
  EXPECT_EQ(reply["meta_info"]["completion_tokens"], 600);
  stopper_.join();
}

TEST_F(HttpServerDrainTest, AForcedStopAbortsInFlightRequests) {
  StartDrainWithARunningRequest(1000);
  ASSERT_FALSE(HasFatalFailure());
  server_->RequestStop(/*drain=*/false);  // a second signal
  EXPECT_EQ(RunningReply()["meta_info"]["finish_reason"]["type"], "abort");
  stopper_.join();
}

}  // namespace
}  // namespace radixlm::server
