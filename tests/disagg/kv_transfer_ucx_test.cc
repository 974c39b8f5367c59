// The UCX KV transfer between a KvSender and a KvReceiver in one process, over 127.0.0.1
// (UCX picks tcp / shm / self as UCX_TLS allows).
#include <gtest/gtest.h>

#include <thread>

#include "disagg/kv_receiver.h"
#include "disagg/kv_sender.h"
#include "disagg/kv_transfer_record.h"

namespace radixlm::disagg {
namespace {

using std::chrono::milliseconds;

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 9));
  return out;
}

std::unique_ptr<KvSender> ListenOnLoopback(milliseconds ttl = milliseconds(60'000)) {
  auto sender = KvSender::Listen({.host = "127.0.0.1", .port = 0, .ttl = ttl});
  EXPECT_TRUE(sender.ok()) << sender.status().ToString();
  EXPECT_GT((*sender)->port(), 0);
  return std::move(*sender);
}

TEST(KvTransferUcxTest, PublishedBeforeTheQuestionArrivesWhole) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok()) << receiver.status().ToString();
  const auto small = Bytes(100, 1);
  sender->Publish(11, small);
  auto got = (*receiver)->Fetch("127.0.0.1", sender->port(), 11, milliseconds(10'000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, small);
}

TEST(KvTransferUcxTest, AQuestionWaitsForTheRecordAndLargeRecordsArriveByteExact) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  // 24 MiB: a rendezvous transfer, the size of ~1,300 prompt tokens of KV for gemma-3-270m.
  const auto large = Bytes(size_t{24} << 20, 9);
  std::thread publisher([&] {
    std::this_thread::sleep_for(milliseconds(200));
    sender->Publish(22, large);
  });
  auto got = (*receiver)->Fetch("localhost", sender->port(), 22, milliseconds(30'000));
  publisher.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == large);
}

TEST(KvTransferUcxTest, ConcurrentRoomsGetTheirOwnRecords) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  constexpr int kRooms = 8;
  std::vector<std::thread> fetchers;
  std::vector<StatusOr<std::vector<uint8_t>>> results(kRooms, Status(StatusCode::kInternal, "-"));
  for (int i = 0; i < kRooms; ++i) {
    fetchers.emplace_back([&, i] {
      results[i] = (*receiver)->Fetch("127.0.0.1", sender->port(), 100 + i, milliseconds(20'000));
    });
  }
  for (int i = kRooms - 1; i >= 0; --i) sender->Publish(100 + i, Bytes(1000 + i * 50'000, i));
  for (auto& t : fetchers) t.join();
  for (int i = 0; i < kRooms; ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status().ToString();
    EXPECT_TRUE(*results[i] == Bytes(1000 + i * 50'000, i)) << "room " << 100 + i;
  }
}

TEST(KvTransferUcxTest, ARoomNeverPublishedTimesOutWithAClearError) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  const auto start = std::chrono::steady_clock::now();
  auto got = (*receiver)->Fetch("127.0.0.1", sender->port(), 33, milliseconds(300));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("timed out"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("33"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The record arriving late goes to the question that timed out and is dropped by the
  // receiver; the connection keeps serving other rooms.
  sender->Publish(33, Bytes(10, 3));
  for (int i = 0; i < 500 && sender->counters().sent == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(sender->counters().sent, 1);
  sender->Publish(34, Bytes(10, 4));
  auto next = (*receiver)->Fetch("127.0.0.1", sender->port(), 34, milliseconds(10'000));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, Bytes(10, 4));
}

TEST(KvTransferUcxTest, NoListenerGivesAnErrorNotAHang) {
  int port = 0;
  {
    auto sender = ListenOnLoopback();
    port = sender->port();
  }  // closed: nobody listens there now
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  auto got = (*receiver)->Fetch("127.0.0.1", port, 44, milliseconds(5'000));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << got.status().message();
}

TEST(KvTransferUcxTest, ASenderThatGoesAwayFailsTheWaitingFetch) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  const int port = sender->port();
  // Connect first (a room that succeeds), then wait on one the sender will never publish.
  sender->Publish(55, Bytes(10, 5));
  ASSERT_TRUE((*receiver)->Fetch("127.0.0.1", port, 55, milliseconds(10'000)).ok());
  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(300));
    sender.reset();
  });
  auto got = (*receiver)->Fetch("127.0.0.1", port, 56, milliseconds(20'000));
  closer.join();
  ASSERT_FALSE(got.ok());
  // Either the connection error or, if UCX notices late, the timeout; never a hang.
  EXPECT_NE(got.status().message().find("56"), std::string::npos) << got.status().message();
}

TEST(KvTransferUcxTest, RecordsNobodyAsksForExpire) {
  auto sender = ListenOnLoopback(milliseconds(100));
  sender->Publish(66, Bytes(10, 6));
  for (int i = 0; i < 200 && sender->counters().expired == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(sender->counters().expired, 1);
  EXPECT_EQ(sender->counters().waiting_records, 0);
}

TEST(KvTransferUcxTest, ListeningOnATakenPortFailsWithTheAddress) {
  auto first = ListenOnLoopback();
  auto second = KvSender::Listen({.host = "127.0.0.1", .port = first->port()});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(std::to_string(first->port())), std::string::npos)
      << second.status().message();
}

}  // namespace
}  // namespace radixlm::disagg
