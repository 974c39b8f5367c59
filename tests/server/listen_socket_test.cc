#include "server/listen_socket.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <utility>

namespace radixlm::server {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

bool Connects(int port) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  return !ec;
}

TEST(ListenSocketTest, PortZeroPicksAFreePortThatAcceptsConnections) {
  auto listener = ListenSocket::Open("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  EXPECT_TRUE(listener->is_open());
  EXPECT_FALSE(listener->ipv6());
  ASSERT_GT(listener->port(), 0);
  // Nothing accepts yet: the kernel completes the connection into the backlog.
  EXPECT_TRUE(Connects(listener->port()));
}

TEST(ListenSocketTest, APortInUseIsAnIoErrorNamingTheAddress) {
  auto first = ListenSocket::Open("127.0.0.1", 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int port = first->port();
  auto second = ListenSocket::Open("127.0.0.1", port);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIoError);
  EXPECT_NE(second.status().message().find("cannot listen on 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("in use"), std::string::npos);
}

TEST(ListenSocketTest, ClosingFreesThePort) {
  int port = 0;
  {
    auto first = ListenSocket::Open("127.0.0.1", 0);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    port = first->port();
    ASSERT_TRUE(Connects(port));  // a connection, so the port has a socket in TIME_WAIT or so
  }
  EXPECT_FALSE(Connects(port));
  auto again = ListenSocket::Open("127.0.0.1", port);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(ListenSocketTest, MovingAndReleasingHandOverTheDescriptor) {
  auto opened = ListenSocket::Open("127.0.0.1", 0);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ListenSocket moved = std::move(*opened);
  EXPECT_FALSE(opened->is_open());
  ASSERT_TRUE(moved.is_open());
  const int port = moved.port();
  const int fd = moved.Release();
  EXPECT_FALSE(moved.is_open());
  EXPECT_TRUE(Connects(port));  // released, not closed
  ::close(fd);
  EXPECT_FALSE(Connects(port));
}

TEST(ListenSocketTest, APortOutOfRangeIsRefused) {
  auto high = ListenSocket::Open("127.0.0.1", 65536);
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(high.status().message().find("--port must be in [0, 65535]"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::server
