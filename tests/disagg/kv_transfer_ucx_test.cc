// The UCX KV transfer between a KvSender and a KvReceiver in one process, over 127.0.0.1
// (UCX picks tcp / shm / self as UCX_TLS allows).
#include <gtest/gtest.h>

#include <thread>

#include "disagg/kv_receiver.h"
#include "disagg/kv_sender.h"
#include "disagg/kv_transfer_record.h"
#include "disagg/pd_transfer.h"

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

TEST(KvTransferUcxTest, BothEndsCountTheBytesAndSecondsOfEachTransfer) {
  auto sender = ListenOnLoopback();
  auto receiver = KvReceiver::Create();
  ASSERT_TRUE(receiver.ok());
  const auto large = Bytes(size_t{8} << 20, 2);
  const auto small = Bytes(100, 3);
  sender->Publish(1, large);
  sender->Publish(2, small);
  ASSERT_TRUE((*receiver)->Fetch("127.0.0.1", sender->port(), 1, milliseconds(30'000)).ok());
  ASSERT_TRUE((*receiver)->Fetch("127.0.0.1", sender->port(), 2, milliseconds(30'000)).ok());
  const KvReceiver::Counters got = (*receiver)->counters();
  EXPECT_EQ(got.received, 2);
  EXPECT_EQ(got.bytes_received, static_cast<int64_t>(large.size() + small.size()));
  EXPECT_GT(got.receive_seconds, 0.0);  // the 8 MiB record was pulled, not delivered at once
  EXPECT_EQ(got.refused, 0);
  // The sender counts a send once it completes, which may be just after the receiver has it.
  for (int i = 0; i < 500 && sender->counters().sent < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  const KvSender::Counters sent = sender->counters();
  EXPECT_EQ(sent.sent, 2);
  EXPECT_EQ(sent.bytes_sent, static_cast<int64_t>(large.size() + small.size()));
  EXPECT_GT(sent.send_seconds, 0.0);
}

// A peer cannot make the decode server allocate more than its KV layout allows: a record over
// the cap fails its fetch unread, whether it comes in one message or by rendezvous, and the
// connection keeps serving rooms within the cap.
TEST(KvTransferUcxTest, ARecordLongerThanTheCapIsRefusedAndTheConnectionKeepsServing) {
  auto sender = ListenOnLoopback();
  constexpr uint64_t kCap = 1 << 20;
  auto receiver = KvReceiver::Create({.max_record_bytes = kCap});
  ASSERT_TRUE(receiver.ok());
  const auto huge = Bytes(size_t{24} << 20, 7);  // rendezvous
  sender->Publish(77, huge);
  auto refused = (*receiver)->Fetch("127.0.0.1", sender->port(), 77, milliseconds(30'000));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = refused.status().message();
  EXPECT_NE(message.find(std::to_string(huge.size()) + "-byte record"), std::string::npos)
      << message;
  EXPECT_NE(message.find(std::to_string(kCap)), std::string::npos) << message;
  EXPECT_NE(message.find("bootstrap_room 77"), std::string::npos) << message;

  const auto fits = Bytes(kCap, 8);  // exactly the cap is accepted
  sender->Publish(78, fits);
  auto got = (*receiver)->Fetch("127.0.0.1", sender->port(), 78, milliseconds(30'000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == fits);
  EXPECT_EQ((*receiver)->counters().refused, 1);
  EXPECT_EQ((*receiver)->counters().received, 1);
  EXPECT_EQ((*receiver)->counters().bytes_received, static_cast<int64_t>(kCap));

  // A small record over a small cap arrives in one message; it is refused all the same.
  auto strict = KvReceiver::Create({.max_record_bytes = 50});
  ASSERT_TRUE(strict.ok());
  sender->Publish(79, Bytes(100, 9));
  auto small = (*strict)->Fetch("127.0.0.1", sender->port(), 79, milliseconds(10'000));
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("100-byte record"), std::string::npos)
      << small.status().message();
}

TEST(KvTransferUcxTest, TheCapHoldsAFullContextRecordOfTheModelAndNotTwice) {
  // gemma-3-270m's layout: 18 layers, one KV head of 256 values.
  constexpr uint32_t kLayers = 18, kRowElems = 256;
  constexpr int64_t kContext = 2048;
  constexpr int64_t kTokenBytes = kLayers * 2 * kRowElems * 2;
  const uint64_t cap = MaxKvRecordBytes(kContext, kTokenBytes);
  auto record_of = [&](int64_t tokens) {
    KvTransferRecord record;
    record.room = 1;
    record.prompt_ids.assign(static_cast<size_t>(tokens), 5);
    record.row_elems = kRowElems;
    record.rows_from.assign(kLayers, 0);
    record.kv.resize(record.MaxKvBytes());
    return SerializeKvTransferRecord(record);
  };
  EXPECT_LE(record_of(kContext).size(), cap);
  EXPECT_GT(record_of(2 * kContext).size(), cap);
  KvTransferRecord failed;
  failed.error = std::string(1000, 'x');  // an error record fits whatever the context
  EXPECT_LE(SerializeKvTransferRecord(failed).size(), MaxKvRecordBytes(1, kTokenBytes));
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
