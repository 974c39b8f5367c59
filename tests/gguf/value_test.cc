// Value rendering/equality and the ggml type table.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "gguf/ggml_types.h"
#include "gguf/gguf_value.h"

namespace radixlm::gguf {
namespace {

TEST(GgmlTypesTest, BlockGeometryMatchesGgml) {
  struct Row {
    GgmlType type;
    const char* name;
    int64_t block_size;
    int64_t type_size;
  };
  const Row kRows[] = {
      {GgmlType::kF32, "F32", 1, 4},
      {GgmlType::kF16, "F16", 1, 2},
      {GgmlType::kBF16, "BF16", 1, 2},
      {GgmlType::kQ4_0, "Q4_0", 32, 18},
      {GgmlType::kQ4_1, "Q4_1", 32, 20},
      {GgmlType::kQ5_0, "Q5_0", 32, 22},
      {GgmlType::kQ5_1, "Q5_1", 32, 24},
      {GgmlType::kQ8_0, "Q8_0", 32, 34},
      {GgmlType::kQ8_1, "Q8_1", 32, 36},
      {GgmlType::kQ2_K, "Q2_K", 256, 84},
      {GgmlType::kQ3_K, "Q3_K", 256, 110},
      {GgmlType::kQ4_K, "Q4_K", 256, 144},
      {GgmlType::kQ5_K, "Q5_K", 256, 176},
      {GgmlType::kQ6_K, "Q6_K", 256, 210},
      {GgmlType::kQ8_K, "Q8_K", 256, 292},
      {GgmlType::kI8, "I8", 1, 1},
      {GgmlType::kI16, "I16", 1, 2},
      {GgmlType::kI32, "I32", 1, 4},
      {GgmlType::kI64, "I64", 1, 8},
      {GgmlType::kF64, "F64", 1, 8},
      {GgmlType::kIQ2_XXS, "IQ2_XXS", 256, 66},
      {GgmlType::kIQ2_XS, "IQ2_XS", 256, 74},
      {GgmlType::kIQ3_XXS, "IQ3_XXS", 256, 98},
      {GgmlType::kIQ1_S, "IQ1_S", 256, 50},
      {GgmlType::kIQ4_NL, "IQ4_NL", 32, 18},
      {GgmlType::kIQ3_S, "IQ3_S", 256, 110},
      {GgmlType::kIQ2_S, "IQ2_S", 256, 82},
      {GgmlType::kIQ4_XS, "IQ4_XS", 256, 136},
      {GgmlType::kIQ1_M, "IQ1_M", 256, 56},
      {GgmlType::kMXFP4, "MXFP4", 32, 17},
  };
  EXPECT_EQ(std::size(kRows), std::size(kAllGgmlTypes));
  for (const Row& row : kRows) {
    auto traits = GetTypeTraits(row.type);
    ASSERT_TRUE(traits.has_value()) << row.name;
    EXPECT_EQ(traits->name, row.name);
    EXPECT_EQ(traits->block_size, row.block_size) << row.name;
    EXPECT_EQ(traits->type_size, row.type_size) << row.name;
    EXPECT_EQ(GgmlTypeName(row.type), row.name);
  }
  // Removed ids (4, 5, the interleaved 31-33 / 36-38) and types this reader does not know
  // (the ternary TQ1_0 / TQ2_0 34-35, NVFP4 40, Q1_0 / Q2_0 41-42).
  for (uint32_t removed : {4u, 5u, 31u, 32u, 33u, 34u, 35u, 36u, 40u, 41u, 43u, 1000u}) {
    EXPECT_FALSE(GetTypeTraits(removed).has_value()) << removed;
  }
}

TEST(GgmlTypesTest, RowSizeBytes) {
  EXPECT_EQ(RowSizeBytes(GgmlType::kQ4_K, 512), 288);
  EXPECT_EQ(RowSizeBytes(GgmlType::kQ8_0, 64), 68);
  EXPECT_EQ(RowSizeBytes(GgmlType::kF32, 3), 12);
  EXPECT_EQ(RowSizeBytes(GgmlType::kQ4_K, 100), -1);
  EXPECT_EQ(RowSizeBytes(GgmlType::kF32, -1), -1);
  EXPECT_EQ(RowSizeBytes(GgmlType::kF64, std::numeric_limits<int64_t>::max()), -1);
}

TEST(ValueTest, ScalarsAndAccessors) {
  EXPECT_TRUE(Value::U8(7).is_integer());
  EXPECT_EQ(Value::I8(-3).AsInt(), -3);
  EXPECT_EQ(Value::U64(std::numeric_limits<uint64_t>::max()).AsInt(),
            std::numeric_limits<int64_t>::max());
  EXPECT_DOUBLE_EQ(Value::I32(-5).AsFloat(), -5.0);
  EXPECT_DOUBLE_EQ(Value::F32(0.5f).AsFloat(), 0.5);
  EXPECT_TRUE(Value::F64(1.0).is_float());
  EXPECT_TRUE(Value::Bool(true).AsBool());
  EXPECT_EQ(Value::Str("x").AsString(), "x");
  EXPECT_EQ(Value::I32Arr({1, 2}).AsArray().items.size(), 2u);
  EXPECT_EQ(ValueTypeName(ValueType::kFloat64), "f64");
}

TEST(ValueTest, Equality) {
  EXPECT_EQ(Value::U32(5), Value::U32(5));
  EXPECT_NE(Value::U32(5), Value::I32(5));  // same number, different on-disk type
  EXPECT_NE(Value::U32(5), Value::U32(6));
  EXPECT_EQ(Value::StrArr({"a", "b"}), Value::StrArr({"a", "b"}));
  EXPECT_NE(Value::StrArr({"a", "b"}), Value::StrArr({"a"}));
  EXPECT_NE(Value::Arr(ValueType::kInt32, {}), Value::Arr(ValueType::kUint8, {}));
}

TEST(ValueTest, ToStringRendersEveryKind) {
  EXPECT_EQ(Value::U8(255).ToString(), "255");
  EXPECT_EQ(Value::I64(-42).ToString(), "-42");
  EXPECT_EQ(Value::U64(18446744073709551615ull).ToString(), "18446744073709551615");
  EXPECT_EQ(Value::F32(1e-6f).ToString(), "1e-06");
  EXPECT_EQ(Value::F32(0.1f).ToString(), "0.1");  // shortest float text, not 0.100000001
  EXPECT_EQ(Value::F64(2.5).ToString(), "2.5");
  EXPECT_EQ(Value::Bool(false).ToString(), "false");
  EXPECT_EQ(Value::Str("a\"b\\c\nd\x01").ToString(), "\"a\\\"b\\\\c\\nd\\x01\"");
  EXPECT_EQ(Value::I32Arr({1, 2, 3}).ToString(), "[1, 2, 3]");
  EXPECT_EQ(Value::Arr(ValueType::kString, {}).ToString(), "[]");
  Value nested = Value::Arr(ValueType::kArray, {Value::I32Arr({1}), Value::StrArr({"x"})});
  EXPECT_EQ(nested.ToString(), "[[1], [\"x\"]]");
}

TEST(ValueTest, ToStringAbbreviates) {
  std::vector<int32_t> many(262144);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int32_t>(i);
  EXPECT_EQ(Value::I32Arr(many).ToString(), "[0, 1, 2, 3, 4, 5, 6, 7, ... (262144 items)]");
  EXPECT_EQ(Value::I32Arr({1, 2, 3}).ToString(2), "[1, 2, ... (3 items)]");
  EXPECT_EQ(Value::I32Arr({1, 2, 3}).ToString(0), "[... (3 items)]");
  EXPECT_EQ(Value::Str("abcdef").ToString(8, 3), "\"abc\"... (6 bytes)");
  // Never cuts inside a UTF-8 sequence: "é" is two bytes.
  EXPECT_EQ(Value::Str("a\xC3\xA9z").ToString(8, 2), "\"a\"... (4 bytes)");
  EXPECT_EQ(Value::Str("short").ToString(8, 100), "\"short\"");
}

}  // namespace
}  // namespace radixlm::gguf
