// Helpers shared by the tokenizer tests: loading vocabularies and llama.cpp's test vectors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace radixlm::tokenizer::testutil {

// RADIXLM_TESTDATA_DIR/llama-vocab/ggml-vocab-<name>.gguf
std::string VocabPath(const std::string& name);

StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerFile(const std::string& path);

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// The <name>.gguf.inp / .out pair (format: llama-vocab/PROVENANCE.txt).
StatusOr<std::vector<VocabCase>> ReadVocabCases(const std::string& name);

std::string IdsToString(const std::vector<int32_t>& ids);
// Printable rendering of arbitrary bytes (escapes controls and invalid UTF-8).
std::string Escape(const std::string& bytes);

// The vocabularies with .inp/.out vectors that radixlm supports.
const std::vector<std::string>& SupportedVocabNames();

}  // namespace radixlm::tokenizer::testutil
