// The safetensors reader: tensors where the header says, and every malformed header refused
// with a message naming the file and the tensor.
#include "hf/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>

#include "hf_test_util.h"

namespace radixlm::hf {
namespace {

using testing::FreshDir;
using testing::SafetensorsBytes;
using testing::StEntry;
using testing::WriteFile;

std::vector<uint8_t> Floats(std::initializer_list<float> v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.begin(), out.size());
  return out;
}

// A file whose header is `header` verbatim, followed by `data_bytes` zero bytes.
std::vector<uint8_t> RawFile(const std::string& header, size_t data_bytes) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(header.size() >> (8 * i)));
  out += header;
  out.append(data_bytes, '\0');
  return std::vector<uint8_t>(out.begin(), out.end());
}

std::string OpenError(const std::string& dir, const std::vector<uint8_t>& bytes) {
  const std::string path = dir + "/model.safetensors";
  WriteFile(path, bytes);
  auto f = SafetensorsFile::Open(path);
  EXPECT_FALSE(f.ok());
  return f.ok() ? "" : f.status().message();
}

TEST(SafetensorsTest, ReadsTensorsWhereTheHeaderSays) {
  const std::string dir = FreshDir("st_read");
  WriteFile(dir + "/model.safetensors",
            SafetensorsBytes({{"a", "F32", {2, 2}, Floats({1, 2, 3, 4})},
                              {"b", "BF16", {3}, std::vector<uint8_t>(6, 0x3f)}}));
  auto f = SafetensorsFile::Open(dir + "/model.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ((*f)->tensors().size(), 2u);
  const StTensor& a = (*f)->tensors()[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, StDtype::kF32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  float v[4];
  std::memcpy(v, a.data, 16);
  EXPECT_EQ(v[3], 4.0f);
  EXPECT_EQ((*f)->tensors()[1].dtype, StDtype::kBF16);
  EXPECT_EQ((*f)->tensors()[1].size_bytes, 6u);
  EXPECT_EQ((*f)->metadata().at("format"), "pt");
}

TEST(SafetensorsTest, BadHeadersNameTheFileAndTensor) {
  const std::string dir = FreshDir("st_bad");
  const std::string path = dir + "/model.safetensors";
  std::string m = OpenError(
      dir, RawFile(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 32]}})", 16));
  EXPECT_NE(m.find(path), std::string::npos) << m;
  EXPECT_NE(m.find("'w'"), std::string::npos) << m;
  EXPECT_NE(m.find("outside"), std::string::npos) << m;

  m = OpenError(dir,
                RawFile(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", 16));
  EXPECT_NE(m.find("'w'"), std::string::npos) << m;
  EXPECT_NE(m.find("16 bytes for 3 F32"), std::string::npos) << m;

  m = OpenError(dir,
                RawFile(R"({"w": {"dtype": "Q4", "shape": [4], "data_offsets": [0, 16]}})", 16));
  EXPECT_NE(m.find("unsupported dtype 'Q4'"), std::string::npos) << m;

  m = OpenError(dir, RawFile(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                             R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                             16));
  EXPECT_NE(m.find("overlap"), std::string::npos) << m;

  m = OpenError(dir, RawFile("{not json", 0));
  EXPECT_NE(m.find("not a JSON object"), std::string::npos) << m;

  std::vector<uint8_t> huge = RawFile("{}", 0);
  huge[5] = 1;  // a header length far past the end
  m = OpenError(dir, huge);
  EXPECT_NE(m.find("exceeds the file"), std::string::npos) << m;

  m = OpenError(dir, {1, 2, 3});
  EXPECT_NE(m.find("no header"), std::string::npos) << m;
}

TEST(SafetensorsTest, ShardedIndexReadsEveryShardAndNamesAMissingOne) {
  const std::string dir = FreshDir("st_sharded");
  WriteFile(dir + "/model-00001-of-00002.safetensors",
            SafetensorsBytes({{"a", "F32", {1}, Floats({1})}}));
  WriteFile(dir + "/model-00002-of-00002.safetensors",
            SafetensorsBytes({{"b", "F32", {1}, Floats({2})}}));
  testing::WriteText(dir + "/model.safetensors.index.json",
                     R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",)"
                     R"( "b": "model-00002-of-00002.safetensors"}})");
  auto c = Checkpoint::Open(dir);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->tensors().size(), 2u);
  ASSERT_NE((*c)->Find("b"), nullptr);
  EXPECT_NE((*c)->Find("b")->file.find("00002"), std::string::npos);
  EXPECT_NE((*c)->description().find("2 shards"), std::string::npos);

  testing::WriteText(dir + "/model.safetensors.index.json",
                     R"({"weight_map": {"a": "model-00001-of-00002.safetensors",)"
                     R"( "b": "model-00003-of-00003.safetensors"}})");
  auto missing = Checkpoint::Open(dir);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("model-00003-of-00003.safetensors"), std::string::npos);

  const std::string empty = FreshDir("st_empty");
  auto none = Checkpoint::Open(empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("model.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::hf
