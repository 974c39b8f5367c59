// The disk KV block format: checksum, round trip, and every way a file can be unusable.
#include "cache/kv_block.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cache/crc32c.h"

namespace radixlm {
namespace {

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);  // the standard check value
  EXPECT_EQ(Crc32c("", 0), 0u);
  // Continuing a checksum equals one pass over the concatenation.
  EXPECT_EQ(Crc32c("56789", 5, Crc32c("1234", 4)), 0xE3069283u);
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
}

TEST(PrefixHasherTest, KeyCoversTheWholePrefixAndSplitsDoNotMatter) {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};
  PrefixHasher whole;
  whole.Update(a);
  PrefixHasher parts;
  parts.Update(std::span<const int32_t>(a).first(2));
  parts.Update(std::span<const int32_t>(a).subspan(2));
  EXPECT_EQ(whole.key(), parts.key());
  // The same last block after another prefix is another key.
  const std::vector<int32_t> b = {9, 2, 3, 4, 5, 6};
  PrefixHasher other;
  other.Update(b);
  EXPECT_NE(whole.key(), other.key());
  EXPECT_EQ(whole.key().Hex().size(), 32u);
}

class KvBlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hasher_.Update(tokens_);
    key_ = hasher_.key();
    for (size_t i = 0; i < payload_.size(); ++i) payload_[i] = static_cast<uint8_t>(i * 7 + 3);
    file_ = EncodeKvBlock(kModel, key_, tokens_, payload_);
  }
  StatusOr<std::span<const uint8_t>> Decode(std::span<const uint8_t> file,
                                            uint64_t model = kModel) {
    return DecodeKvBlock(file, model, key_, tokens_, payload_.size());
  }

  static constexpr uint64_t kModel = 0x1234abcdull;
  std::vector<int32_t> tokens_ = {10, 11, 12, 13};
  std::vector<uint8_t> payload_ = std::vector<uint8_t>(4 * 40);
  PrefixHasher hasher_;
  BlockKey key_;
  std::vector<uint8_t> file_;
};

TEST_F(KvBlockTest, RoundTrip) {
  EXPECT_EQ(file_.size(), kKvBlockHeaderBytes + 4 * tokens_.size() + payload_.size() + 4);
  auto payload = Decode(file_);
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  EXPECT_TRUE(std::equal(payload->begin(), payload->end(), payload_.begin(), payload_.end()));
  auto header = DecodeKvBlockHeader(file_);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->model_id, kModel);
  EXPECT_EQ(header->key, key_);
  EXPECT_EQ(header->n_tokens, tokens_.size());
  EXPECT_EQ(header->file_size(), file_.size());
}

TEST_F(KvBlockTest, TruncatedFileIsRejected) {
  for (size_t len : {size_t{0}, size_t{10}, kKvBlockHeaderBytes, file_.size() - 1}) {
    auto r = Decode(std::span<const uint8_t>(file_).first(len));
    EXPECT_FALSE(r.ok()) << "length " << len;
  }
  std::vector<uint8_t> padded = file_;
  padded.push_back(0);
  EXPECT_FALSE(Decode(padded).ok());
}

TEST_F(KvBlockTest, EveryFlippedByteIsRejected) {
  for (size_t i = 0; i < file_.size(); ++i) {
    std::vector<uint8_t> bad = file_;
    bad[i] ^= 0x40;
    EXPECT_FALSE(Decode(bad).ok()) << "byte " << i;
  }
}

TEST_F(KvBlockTest, ForeignModelPrefixOrTokensAreRejected) {
  auto foreign = Decode(file_, kModel + 1);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("another model"), std::string::npos);
  PrefixHasher other;
  other.Update(std::vector<int32_t>{1});
  EXPECT_FALSE(DecodeKvBlock(file_, kModel, other.key(), tokens_, payload_.size()).ok());
  const std::vector<int32_t> other_tokens = {10, 11, 12, 14};
  EXPECT_FALSE(DecodeKvBlock(file_, kModel, key_, other_tokens, payload_.size()).ok());
  EXPECT_FALSE(DecodeKvBlock(file_, kModel, key_, tokens_, payload_.size() + 4).ok());
  std::vector<uint8_t> bad_magic = file_;
  bad_magic[0] = 'X';
  EXPECT_FALSE(DecodeKvBlockHeader(bad_magic).ok());
}

}  // namespace
}  // namespace radixlm
