#include "disagg/kv_transfer_record.h"

#include <gtest/gtest.h>

namespace radixlm::disagg {
namespace {

// A record without linear-layer state ends with its shape (4 + 8 + 8 bytes) and the empty
// state's length (8).
constexpr size_t kStateTailBytes = 4 + 8 + 8 + 8;

KvTransferRecord SampleRecord() {
  KvTransferRecord r;
  r.room = (uint64_t{1} << 62) + 12345;
  r.prompt_ids = {2, 105, 2364, 107, 9};
  r.row_elems = 4;
  r.dtype = 1;
  r.rows_from = {0, 3, 0};  // the middle layer keeps a window of 2 positions
  r.kv.resize(r.MaxKvBytes());
  for (size_t i = 0; i < r.kv.size(); ++i) r.kv[i] = static_cast<uint8_t>(i * 7 + 3);
  r.lora_identity = 0x8badf00d12345678ull;
  r.lora_name = "support-bot";
  return r;
}

TEST(KvTransferRecordTest, RoundTripsEveryField) {
  const KvTransferRecord r = SampleRecord();
  // (5 + 2 + 5 rows) * K,V * 4 values * 2 bytes
  EXPECT_EQ(r.MaxKvBytes(), uint64_t{12 * 2 * 4 * 2});
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->room, r.room);
  EXPECT_EQ(parsed->error, "");
  EXPECT_EQ(parsed->prompt_ids, r.prompt_ids);
  EXPECT_EQ(parsed->row_elems, r.row_elems);
  EXPECT_EQ(parsed->dtype, r.dtype);
  EXPECT_EQ(parsed->rows_from, r.rows_from);
  EXPECT_EQ(parsed->kv, r.kv);
  EXPECT_EQ(parsed->lora_identity, r.lora_identity);
  EXPECT_EQ(parsed->lora_name, r.lora_name);
}

// A version 1 record (before records carried the LoRA adapter) is read as the base model's.
TEST(KvTransferRecordTest, AVersionOneRecordIsTheBaseModels) {
  KvTransferRecord r = SampleRecord();
  r.lora_identity = 0;
  r.lora_name.clear();
  std::vector<uint8_t> bytes = SerializeKvTransferRecord(r);
  // magic, version, room, error (empty), prompt_ids, row_elems, dtype; then the adapter's
  // identity (8 bytes) and name (its 8-byte length, empty), which version 1 lacks; at the end
  // the linear-layer state's shape (4 + 8 + 8 bytes) and bytes (8 for the empty length),
  // which versions 1 and 2 lack.
  bytes.resize(bytes.size() - kStateTailBytes);
  const size_t adapter_at = 4 + 4 + 8 + 8 + 8 + 4 * r.prompt_ids.size() + 4 + 4;
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(adapter_at),
              bytes.begin() + static_cast<std::ptrdiff_t>(adapter_at + 16));
  bytes[4] = 1;
  auto parsed = ParseKvTransferRecord(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->prompt_ids, r.prompt_ids);
  EXPECT_EQ(parsed->rows_from, r.rows_from);
  EXPECT_EQ(parsed->kv, r.kv);
  EXPECT_EQ(parsed->lora_identity, 0u);
  EXPECT_EQ(parsed->lora_name, "");
  bytes[4] = 4;  // a version from the future
  parsed = ParseKvTransferRecord(bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("version 4"), std::string::npos);
}

// A hybrid model's record (version 3) carries the linear layers' state after its tokens.
TEST(KvTransferRecordTest, AHybridRecordCarriesItsLinearLayersState) {
  KvTransferRecord r = SampleRecord();
  r.state_layers = 3;
  r.state_conv_floats = 6;
  r.state_delta_floats = 16;
  EXPECT_EQ(r.ExpectedStateBytes(), uint64_t{3 * (6 + 16) * 4});
  r.state.resize(r.ExpectedStateBytes());
  for (size_t i = 0; i < r.state.size(); ++i) r.state[i] = static_cast<uint8_t>(i * 5 + 1);
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kv, r.kv);
  EXPECT_EQ(parsed->state_layers, 3u);
  EXPECT_EQ(parsed->state_conv_floats, 6u);
  EXPECT_EQ(parsed->state_delta_floats, 16u);
  EXPECT_EQ(parsed->state, r.state);

  // An empty prefix's state is the initial one: no bytes.
  KvTransferRecord empty = r;
  empty.prompt_ids.clear();
  empty.kv.clear();
  empty.state.clear();
  parsed = ParseKvTransferRecord(SerializeKvTransferRecord(empty));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->state_layers, 3u);
  EXPECT_TRUE(parsed->state.empty());

  r.state.pop_back();
  parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("linear-layer state"), std::string::npos)
      << parsed.status().message();
}

// A version 2 record (before records carried the linear layers' state) has none.
TEST(KvTransferRecordTest, AVersionTwoRecordHasNoLinearState) {
  const KvTransferRecord r = SampleRecord();
  std::vector<uint8_t> bytes = SerializeKvTransferRecord(r);
  bytes.resize(bytes.size() - kStateTailBytes);
  bytes[4] = 2;
  auto parsed = ParseKvTransferRecord(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kv, r.kv);
  EXPECT_EQ(parsed->lora_name, r.lora_name);
  EXPECT_EQ(parsed->state_layers, 0u);
  EXPECT_TRUE(parsed->state.empty());
}

TEST(KvTransferRecordTest, AnErrorRecordCarriesItsMessageAndNoKv) {
  KvTransferRecord r;
  r.room = 7;
  r.error = "the prefill request was aborted";
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->room, 7u);
  EXPECT_EQ(parsed->error, r.error);
  EXPECT_TRUE(parsed->kv.empty());
}

TEST(KvTransferRecordTest, RejectsEveryTruncationAndTrailingBytes) {
  const std::vector<uint8_t> bytes = SerializeKvTransferRecord(SampleRecord());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto parsed = ParseKvTransferRecord(std::span(bytes.data(), n));
    EXPECT_FALSE(parsed.ok()) << "a prefix of " << n << " bytes parsed";
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  auto parsed = ParseKvTransferRecord(longer);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("trailing"), std::string::npos);
}

TEST(KvTransferRecordTest, RejectsKvLargerThanItsLayoutAllows) {
  KvTransferRecord r = SampleRecord();
  r.rows_from[1] += 1;  // now claims one row fewer than kv holds
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("KV bytes"), std::string::npos)
      << parsed.status().message();
}

// A latent cache sends one plane per layer, and a model with layers of different widths sends
// each layer's own rows: fewer bytes than two planes of row_elems. The record carries them; the
// importing engine checks the exact layout against its model (prefix_kv_test).
TEST(KvTransferRecordTest, CarriesOnePlaneAndNarrowerLayers) {
  KvTransferRecord r = SampleRecord();
  r.kv.resize(r.MaxKvBytes() / 2);
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kv, r.kv);
}

TEST(KvTransferRecordTest, AnFp8RecordHoldsOneBytePerValueAndUnknownDtypesAreRefused) {
  KvTransferRecord r = SampleRecord();
  r.dtype = 2;  // fp8_e5m2
  EXPECT_EQ(r.MaxKvBytes(), uint64_t{12 * 2 * 4 * 1});
  r.kv.resize(r.MaxKvBytes());
  auto parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->kv, r.kv);
  r.dtype = 9;
  parsed = ParseKvTransferRecord(SerializeKvTransferRecord(r));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("unknown KV dtype 9"), std::string::npos)
      << parsed.status().message();
}

TEST(KvTransferRecordTest, RejectsAForeignMagic) {
  std::vector<uint8_t> bytes = SerializeKvTransferRecord(SampleRecord());
  bytes[0] ^= 0xff;
  auto parsed = ParseKvTransferRecord(bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("magic"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::disagg
