// The Python-semantics helpers under the engine: UTF-8 code points, str methods, float repr.
#include "chat/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chat/json_value.h"
#include "chat/value.h"

namespace radixlm::chat {
namespace {

using Strings = std::vector<std::string>;

TEST(TextTest, CodePoints) {
  EXPECT_EQ(CodePointCount("héllo😀"), 6u);
  EXPECT_EQ(CodePointOffsets("aé😀"), (std::vector<size_t>{0, 1, 3, 7}));
  std::string invalid =
      "a\xff"
      "b";
  EXPECT_EQ(CodePointCount(invalid), 3u);  // a bad byte counts as one code point
}

TEST(TextTest, StripUsesPythonWhitespace) {
  const std::string s = "\xc2\xa0\xe3\x80\x80 x \t\n\x1f";  // NBSP, ideographic space, ...
  EXPECT_EQ(PyStrip(s, nullptr, true, true), "x");
  EXPECT_EQ(PyStrip(" x ", nullptr, true, false), "x ");
  const std::string chars = "xé";
  EXPECT_EQ(PyStrip("éxaxé", &chars, true, true), "a");
  EXPECT_EQ(PyStrip("\xe2\x80\x8bz", nullptr, true, true), "\xe2\x80\x8bz");  // ZWSP is not space
}

TEST(TextTest, SplitLikePython) {
  EXPECT_EQ(PySplit("  a  b c ", nullptr, -1), (Strings{"a", "b", "c"}));
  EXPECT_EQ(PySplit("a b  c d", nullptr, 2), (Strings{"a", "b", "c d"}));
  const std::string comma = ",";
  EXPECT_EQ(PySplit(",a,,b,", &comma, -1), (Strings{"", "a", "", "b", ""}));
  EXPECT_EQ(PySplit("a,b,c", &comma, 1), (Strings{"a", "b,c"}));
  EXPECT_EQ(PyRSplit("a,b,c", &comma, 1), (Strings{"a,b", "c"}));
  EXPECT_EQ(PyRSplit(" a b  c ", nullptr, 1), (Strings{" a b", "c"}));
  EXPECT_EQ(PySplitLines("a\nb\r\nc\rd\n"), (Strings{"a", "b", "c", "d"}));
}

TEST(TextTest, ReplaceAndCase) {
  EXPECT_EQ(PyReplace("aaa", "a", "b", 2), "bba");
  EXPECT_EQ(PyReplace("ab", "", "-", -1), "-a-b-");
  EXPECT_EQ(PyUpper("straße ñ"), "STRASSE Ñ");
  EXPECT_EQ(PyLower("ΟΔΟΣ ΣΑΣ Σ"), "οδος σας σ");  // final sigma only ends a word
}

TEST(ValueFormatTest, FloatReprMatchesPython) {
  EXPECT_EQ(FormatPyFloat(1.0), "1.0");
  EXPECT_EQ(FormatPyFloat(0.1), "0.1");
  EXPECT_EQ(FormatPyFloat(1e16), "1e+16");
  EXPECT_EQ(FormatPyFloat(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(FormatPyFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatPyFloat(0.00001), "1e-05");
  EXPECT_EQ(FormatPyFloat(-2.5e-300), "-2.5e-300");
  EXPECT_EQ(FormatPyFloat(-0.0), "-0.0");
  EXPECT_EQ(FormatPyFloat(INFINITY), "inf");
  EXPECT_EQ(FormatPyFloat(NAN), "nan");
}

TEST(ValueFormatTest, StringReprMatchesPython) {
  EXPECT_EQ(PyStringRepr("it's"), "\"it's\"");
  EXPECT_EQ(PyStringRepr("a'b\"c"), "'a\\'b\"c'");
  EXPECT_EQ(PyStringRepr("t\tn\n\x01\x7f"), "'t\\tn\\n\\x01\\x7f'");
  EXPECT_EQ(PyStringRepr("é😀"), "'é😀'");
  EXPECT_EQ(PyStringRepr("\xc2\xa0\xe2\x80\x8b"), "'\\xa0\\u200b'");
}

TEST(ValueTest, PythonEqualityAndTruthiness) {
  EXPECT_TRUE(PyEquals(Value::Int(1), Value::Float(1.0)));
  EXPECT_TRUE(PyEquals(Value::Bool(true), Value::Int(1)));
  EXPECT_FALSE(PyEquals(Value::MakeList({Value::Int(1)}), Value::MakeTuple({Value::Int(1)})));
  EXPECT_FALSE(Value().Truthy());
  EXPECT_FALSE(Value::String("").Truthy());
  EXPECT_TRUE(Value::MakeList({Value::None()}).Truthy());
  DictData d;
  d.Set(Value::Int(1), Value::String("x"));
  d.Set(Value::Bool(true), Value::String("y"));  // same key as 1 in Python
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(d.Find(Value::Float(1.0))->as_string(), "y");
}

TEST(JsonValueTest, DumpsLikePythonJson) {
  const nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(R"({"b": [1, 2.0, 1e100, true, null, "é\u0001"], "a": {}})");
  const Value v = ValueFromJson(j);
  JsonDumpOptions options;
  EXPECT_EQ(DumpJson(v, options), R"({"b": [1, 2.0, 1e+100, true, null, "é\u0001"], "a": {}})");
  options.indent = "  ";
  options.item_separator = ",";
  options.sort_keys = true;
  EXPECT_EQ(DumpJson(v, options),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.0,\n    1e+100,\n    true,\n    null,\n"
            "    \"é\\u0001\"\n  ]\n}");
}

}  // namespace
}  // namespace radixlm::chat
