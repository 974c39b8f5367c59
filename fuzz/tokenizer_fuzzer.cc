// Tokenizer encode / decode on one of llama.cpp's vocabulary-only GGUFs in tests/data
// (RADIXLM_FUZZ_VOCAB: "llama-spm" for SPM, "gpt-2" for byte-level BPE).
//
// Input: one flags byte (bit 0 add_special, bit 1 parse_special, bit 2 skip_special), then
// text. The text is encoded (every id must be in the vocabulary), decoded whole and streamed
// (the streamed pieces must concatenate to Decode's output, as tokenizer.h promises), encoded
// as a continuation, and its bytes are also decoded as raw int32 ids, out-of-range ones
// included.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace {

using radixlm::tokenizer::StreamingDetokenizer;
using radixlm::tokenizer::Tokenizer;

const Tokenizer& LoadTokenizer() {
  static const Tokenizer* const tokenizer = [] {
    const std::string path =
        RADIXLM_SOURCE_DIR "/tests/data/llama-vocab/ggml-vocab-" RADIXLM_FUZZ_VOCAB ".gguf";
    auto file = radixlm::gguf::GgufFile::Open(path);
    if (!file.ok()) {
      fprintf(stderr, "%s: %s\n", path.c_str(), file.status().ToString().c_str());
      std::abort();
    }
    auto loaded = Tokenizer::FromGguf(**file);
    if (!loaded.ok()) {
      fprintf(stderr, "%s: %s\n", path.c_str(), loaded.status().ToString().c_str());
      std::abort();
    }
    return loaded->release();
  }();
  return *tokenizer;
}

void CheckStreaming(const Tokenizer& tokenizer, std::span<const int32_t> ids, bool skip_special) {
  StreamingDetokenizer stream(tokenizer, skip_special);
  std::string streamed;
  for (int32_t id : ids) streamed += stream.Feed(id);
  streamed += stream.Flush();
  if (streamed != tokenizer.Decode(ids, skip_special)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tokenizer& tokenizer = LoadTokenizer();
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool add_special = flags & 1, parse_special = flags & 2, skip_special = flags & 4;

  const std::vector<int32_t> ids = tokenizer.Encode(text, add_special, parse_special);
  for (int32_t id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
  }
  CheckStreaming(tokenizer, ids, skip_special);
  for (int32_t id : tokenizer.EncodeContinuation(text)) {
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
  }

  std::vector<int32_t> raw_ids(text.size() / sizeof(int32_t));
  if (!raw_ids.empty()) std::memcpy(raw_ids.data(), text.data(), raw_ids.size() * sizeof(int32_t));
  CheckStreaming(tokenizer, raw_ids, skip_special);
  for (int32_t id : raw_ids) {
    (void)tokenizer.TokenText(id);
    (void)tokenizer.TokenPiece(id);
    (void)tokenizer.IsEog(id);
  }
  return 0;
}
