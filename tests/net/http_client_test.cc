// The HTTP client's pieces that need no server: URL parsing and SSE splitting. (Requests go to
// the real server in tests/e2e/: test_bench.py and test_frontend.py's remote backend; https and
// redirects in test_images.py.)
#include "net/http_client.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace radixlm::net {
namespace {

TEST(ParseBaseUrl, HostPortAndPrefix) {
  auto t = ParseBaseUrl("http://127.0.0.1:30000");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, "30000");
  EXPECT_EQ(t->path_prefix, "");
  t = ParseBaseUrl("localhost/api/");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->host, "localhost");
  EXPECT_EQ(t->port, "80");
  EXPECT_EQ(t->path_prefix, "/api");
  EXPECT_FALSE(t->tls);
  t = ParseBaseUrl("https://example.com/img/a.png");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->host, "example.com");
  EXPECT_EQ(t->port, "443");
  EXPECT_EQ(t->path_prefix, "/img/a.png");
  t = ParseBaseUrl("https://127.0.0.1:8443");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->port, "8443");
  EXPECT_FALSE(ParseBaseUrl("http://").ok());
  EXPECT_FALSE(ParseBaseUrl("http://host:").ok());
}

TEST(SseSplitter, EventsSplitAnywhereAcrossFragments) {
  const std::string stream =
      "data: {\"a\":1}\n\n: comment\r\ndata:{\"b\":2}\r\n\r\nevent: x\ndata: [DONE]\n\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    SseSplitter sse;
    std::vector<std::string> events;
    auto on = [&](std::string_view e) { events.emplace_back(e); };
    sse.Feed(std::string_view(stream).substr(0, cut), on);
    sse.Feed(std::string_view(stream).substr(cut), on);
    ASSERT_EQ(events, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "[DONE]"})) << cut;
  }
}

}  // namespace
}  // namespace radixlm::net
