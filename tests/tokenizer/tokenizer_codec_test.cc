// TokenizerCodec::TokenWithText on llama.cpp's GPT-2 vocabulary file
// (tests/data/llama-vocab/ggml-vocab-gpt-2.gguf): the token whose text is exactly the given
// one, as llama.cpp's mtmd finds an image layout's tokens (lookup_token: token_to_piece with
// special tokens rendered). GPT-2's ids: "\n" 198 ("Ċ"), "\n\n" 628 ("ĊĊ"), "<|endoftext|>" 50256.
#include "tokenizer/tokenizer_codec.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace radixlm::tokenizer {
namespace {

TEST(TokenizerCodecTest, TokenWithTextFindsTheTokenOfExactlyThatText) {
  auto tok = testutil::LoadTokenizerFile(testutil::VocabPath("gpt-2"));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const TokenizerCodec codec(std::move(tok).value());
  EXPECT_EQ(codec.TokenWithText("\n"), 198);
  EXPECT_EQ(codec.TokenWithText("\n\n"), 628);
  EXPECT_EQ(codec.TokenWithText("<|endoftext|>"), 50256);
  EXPECT_EQ(codec.TokenWithText("Ċ"), std::nullopt);  // the stored form, not the text
  EXPECT_EQ(codec.TokenWithText("hello world"), std::nullopt);
  EXPECT_EQ(codec.TokenWithText("<global-img>"), std::nullopt);
}

}  // namespace
}  // namespace radixlm::tokenizer
