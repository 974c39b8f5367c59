// Writer → reader round trips: every value type, nested arrays, every tensor type, versions 2
// and 3, custom alignment, files on disk, typed getters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"

namespace radixlm::gguf {
namespace {

using testing::RandomBytes;

std::vector<std::pair<std::string, Value>> EveryValueType() {
  using L8 = std::numeric_limits<int8_t>;
  using L16 = std::numeric_limits<int16_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  Value deep = Value::I32Arr({7});
  // Eight levels of arrays: the deepest nesting the reader accepts.
  for (int i = 0; i < 7; ++i) deep = Value::Arr(ValueType::kArray, {deep, deep});
  return {
      {"u8", Value::U8(255)},
      {"i8", Value::I8(L8::min())},
      {"u16", Value::U16(65535)},
      {"i16", Value::I16(L16::min())},
      {"u32", Value::U32(4294967295u)},
      {"i32", Value::I32(L32::min())},
      {"u64", Value::U64(std::numeric_limits<uint64_t>::max())},
      {"i64", Value::I64(L64::min())},
      {"f32", Value::F32(-1.5e-7f)},
      {"f64", Value::F64(3.141592653589793)},
      {"f32.inf", Value::F32(std::numeric_limits<float>::infinity())},
      {"bool.true", Value::Bool(true)},
      {"bool.false", Value::Bool(false)},
      {"str", Value::Str("héllo ▁world")},
      {"str.empty", Value::Str("")},
      {"str.nul", Value::Str(std::string("a\0b", 3))},
      {"arr.u8", Value::Arr(ValueType::kUint8, {Value::U8(0), Value::U8(200)})},
      {"arr.i8", Value::Arr(ValueType::kInt8, {Value::I8(-1), Value::I8(1)})},
      {"arr.u16", Value::Arr(ValueType::kUint16, {Value::U16(1), Value::U16(60000)})},
      {"arr.i16", Value::Arr(ValueType::kInt16, {Value::I16(-300)})},
      {"arr.u32", Value::Arr(ValueType::kUint32, {Value::U32(1), Value::U32(3000000000u)})},
      {"arr.i32", Value::I32Arr({-1, 0, L32::max()})},
      {"arr.u64", Value::Arr(ValueType::kUint64, {Value::U64(1ull << 63)})},
      {"arr.i64", Value::Arr(ValueType::kInt64, {Value::I64(L64::max()), Value::I64(-2)})},
      {"arr.f32", Value::F32Arr({0.25f, -1000.0f, 1e30f})},
      {"arr.f64", Value::Arr(ValueType::kFloat64, {Value::F64(-0.0), Value::F64(1e300)})},
      {"arr.bool", Value::Arr(ValueType::kBool, {Value::Bool(true), Value::Bool(false)})},
      {"arr.str", Value::StrArr({"<pad>", "", "▁the", std::string(300, 'x')})},
      {"arr.empty", Value::Arr(ValueType::kFloat32, {})},
      {"arr.nested",
       Value::Arr(ValueType::kArray, {Value::I32Arr({1, 2}), Value::StrArr({"a"}),
                                      Value::Arr(ValueType::kArray, {Value::F32Arr({1.0f})})})},
      {"arr.deep", deep},
  };
}

TEST(GgufRoundTripTest, EveryValueType) {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter writer(version);
    const auto kvs = EveryValueType();
    for (const auto& [key, value] : kvs) writer.AddMetadata(key, value);
    const std::vector<uint8_t> bytes = writer.Serialize();
    auto file = GgufFile::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->version(), version);
    EXPECT_EQ((*file)->alignment(), 32u);
    ASSERT_EQ((*file)->metadata().size(), kvs.size());
    for (size_t i = 0; i < kvs.size(); ++i) {
      EXPECT_EQ((*file)->metadata()[i].first, kvs[i].first);
      EXPECT_EQ((*file)->metadata()[i].second, kvs[i].second) << kvs[i].first;
      const Value* found = (*file)->Find(kvs[i].first);
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(*found, kvs[i].second);
    }
    EXPECT_TRUE((*file)->tensors().empty());
    // Re-serializing what was read gives the same bytes.
    GgufWriter again(version);
    for (const auto& [key, value] : (*file)->metadata()) again.AddMetadata(key, value);
    EXPECT_EQ(again.Serialize(), bytes);
  }
}

TEST(GgufRoundTripTest, EveryTensorType) {
  GgufWriter writer;
  std::vector<std::vector<uint8_t>> datas;
  uint32_t seed = 1;
  for (GgmlType type : kAllGgmlTypes) {
    const int64_t block = GetTypeTraits(type)->block_size;
    const std::vector<int64_t> shape = {block * 2, 3};
    datas.push_back(RandomBytes(static_cast<size_t>(RowSizeBytes(type, block * 2) * 3), seed++));
    const std::string name = "t." + std::string(GgmlTypeName(type));
    ASSERT_TRUE(writer.AddTensor(name, type, shape, datas.back()).ok()) << name;
  }
  ASSERT_TRUE(writer.AddF32Tensor("scalar", {}, {42.0f}).ok());
  ASSERT_TRUE(writer.AddF32Tensor("t.4d", {2, 3, 1, 2}, std::vector<float>(12, 1.0f)).ok());
  const std::vector<uint8_t> bytes = writer.Serialize();
  auto file = GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const GgufFile& f = **file;
  ASSERT_EQ(f.tensors().size(), std::size(kAllGgmlTypes) + 2);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  for (size_t i = 0; i < std::size(kAllGgmlTypes); ++i) {
    const GgmlType type = kAllGgmlTypes[i];
    const TensorInfo* t = f.FindTensor("t." + std::string(GgmlTypeName(type)));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->type, type);
    const int64_t block = GetTypeTraits(type)->block_size;
    EXPECT_EQ(t->shape, (std::vector<int64_t>{block * 2, 3}));
    EXPECT_EQ(t->num_elements(), block * 6);
    EXPECT_EQ(t->row_size(), block * 2);
    EXPECT_EQ(t->num_rows(), 3);
    EXPECT_EQ(t->size_bytes, datas[i].size());
    EXPECT_EQ(t->offset % 32, 0u);
    EXPECT_EQ(static_cast<size_t>(t->data - bytes.data()), f.data_offset() + t->offset);
    EXPECT_EQ(std::memcmp(t->data, datas[i].data(), datas[i].size()), 0);
  }
  const TensorInfo* scalar = f.FindTensor("scalar");
  ASSERT_NE(scalar, nullptr);
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->num_elements(), 1);
  float v = 0;
  std::memcpy(&v, scalar->data, 4);
  EXPECT_EQ(v, 42.0f);
  EXPECT_EQ(f.FindTensor("t.4d")->shape, (std::vector<int64_t>{2, 3, 1, 2}));
  EXPECT_EQ(f.FindTensor("missing"), nullptr);
}

TEST(GgufRoundTripTest, CustomAlignmentIsRecordedAndHonoured) {
  for (uint64_t alignment : {1u, 8u, 64u, 4096u}) {
    GgufWriter writer(3, alignment);
    writer.AddMetadata("general.architecture", Value::Str("llama"));
    ASSERT_TRUE(writer.AddF32Tensor("a", {3}, {1, 2, 3}).ok());
    ASSERT_TRUE(writer.AddF32Tensor("b", {5}, {1, 2, 3, 4, 5}).ok());
    GgufLayout layout;
    const std::vector<uint8_t> bytes = writer.Serialize(&layout);
    auto file = GgufFile::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->alignment(), alignment);
    EXPECT_EQ((*file)->Has("general.alignment"), alignment != 32);
    EXPECT_EQ((*file)->data_offset(), layout.data_section);
    EXPECT_EQ((*file)->data_offset() % alignment, 0u);
    for (const TensorInfo& t : (*file)->tensors()) EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ(bytes.size() % alignment, 0u);
  }
}

TEST(GgufRoundTripTest, WriteToFileAndOpen) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gguf_roundtrip_" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  GgufWriter writer(2);
  writer.AddMetadata("general.architecture", Value::Str("gemma3"));
  writer.AddMetadata("gemma3.block_count", Value::U32(18));
  ASSERT_TRUE(writer.AddF32Tensor("token_embd.weight", {4, 2}, std::vector<float>(8, 0.5f)).ok());
  ASSERT_TRUE(writer.WriteToFile(path).ok());
  {
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->path(), path);
    EXPECT_EQ((*file)->version(), 2u);
    EXPECT_EQ((*file)->file_size(), writer.Serialize().size());
    EXPECT_EQ(*(*file)->GetInt("gemma3.block_count"), 18);
    ASSERT_NE((*file)->FindTensor("token_embd.weight"), nullptr);
  }

  // Truncate on disk: Open names the path and the problem.
  std::filesystem::resize_file(path, 40);
  auto truncated = GgufFile::Open(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find(path), std::string::npos);
  std::filesystem::resize_file(path, 0);
  truncated = GgufFile::Open(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("empty"), std::string::npos);
  std::filesystem::remove(path);

  auto missing = GgufFile::Open(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  auto dir = GgufFile::Open(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("not a regular file"), std::string::npos);
}

TEST(GgufRoundTripTest, TypedGetters) {
  GgufWriter writer;
  writer.AddMetadata("s", Value::Str("text"));
  writer.AddMetadata("i", Value::I32(-7));
  writer.AddMetadata("u", Value::U64(9));
  writer.AddMetadata("f", Value::F32(0.5f));
  writer.AddMetadata("b", Value::Bool(true));
  writer.AddMetadata("a", Value::I32Arr({1, 2}));
  const std::vector<uint8_t> bytes = writer.Serialize();
  auto opened = GgufFile::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(opened.ok());
  const GgufFile& f = **opened;
  EXPECT_EQ(*f.GetString("s"), "text");
  EXPECT_EQ(*f.GetInt("i"), -7);
  EXPECT_EQ(*f.GetInt("u"), 9);
  EXPECT_DOUBLE_EQ(*f.GetFloat("f"), 0.5);
  EXPECT_DOUBLE_EQ(*f.GetFloat("i"), -7.0);  // integers are accepted as floats
  EXPECT_TRUE(*f.GetBool("b"));
  EXPECT_EQ((*f.GetArray("a"))->items.size(), 2u);
  EXPECT_EQ(f.GetInt("missing").status().code(), StatusCode::kNotFound);
  const Status wrong = f.GetInt("s").status();
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.message().find("'s'"), std::string::npos);
  EXPECT_FALSE(f.GetString("i").ok());
  EXPECT_FALSE(f.GetFloat("s").ok());
  EXPECT_FALSE(f.GetBool("i").ok());
  EXPECT_FALSE(f.GetArray("s").ok());
  EXPECT_EQ(*f.GetIntOr("missing", 5), 5);
  EXPECT_EQ(*f.GetStringOr("missing", "d"), "d");
  EXPECT_DOUBLE_EQ(*f.GetFloatOr("missing", 1.5), 1.5);
  EXPECT_FALSE(*f.GetBoolOr("missing", false));
  EXPECT_EQ(*f.GetIntOr("i", 5), -7);
  EXPECT_FALSE(f.GetIntOr("s", 5).ok());  // present with the wrong type is still an error
}

TEST(GgufWriterTest, RejectsBadTensors) {
  GgufWriter w;
  EXPECT_FALSE(w.AddTensor("x", static_cast<GgmlType>(4), {32}, std::vector<uint8_t>(18)).ok());
  EXPECT_FALSE(w.AddF32Tensor("x", {1, 1, 1, 1, 1}, {1.0f}).ok());
  EXPECT_FALSE(w.AddF32Tensor("x", {0}, {}).ok());
  EXPECT_FALSE(w.AddF32Tensor("x", {-2}, {}).ok());
  EXPECT_FALSE(w.AddF32Tensor("x", {3}, {1.0f, 2.0f}).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::kQ4_0, {16}, std::vector<uint8_t>(9)).ok());
  EXPECT_TRUE(w.AddTensor("x", GgmlType::kQ4_0, {32}, std::vector<uint8_t>(18)).ok());
  const Status dup = w.AddTensor("x", GgmlType::kQ4_0, {32}, std::vector<uint8_t>(18));
  EXPECT_NE(dup.message().find("duplicate"), std::string::npos);
}

}  // namespace
}  // namespace radixlm::gguf
