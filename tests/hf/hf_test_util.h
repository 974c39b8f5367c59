// Writing Hugging Face checkpoint folders in tests: safetensors files, config.json, a small
// byte-level BPE tokenizer.json, and a whole folder made from a tiny GGUF (tiny_model.h) by
// undoing what llama.cpp's converter does (names, the Q/K row permutation, gemma's norm + 1).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace radixlm::hf::testing {

struct StEntry {
  std::string name;
  std::string dtype;  // "F32", "BF16", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// The bytes of a safetensors file holding `entries` in order.
std::vector<uint8_t> SafetensorsBytes(const std::vector<StEntry>& entries);
void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);
void WriteText(const std::string& path, const std::string& text);

// The bytes spelled by `hex` ("c3a9" -> "\xC3\xA9"), for goldens that hold bytes that are not
// UTF-8.
std::string BytesFromHex(const std::string& hex);

// tests/hf/testdata/`name`, parsed.
nlohmann::json ReadTestdataJson(const std::string& name);

// A golden case's input: its "text", or the bytes of its "bytes_hex" (input that is not UTF-8).
std::string GoldenCaseInput(const nlohmann::json& c);

// A fresh empty directory under the test's temporary directory, removed when the test process
// exits (kept where a test failed).
std::string FreshDir(const std::string& name);

// tokenizer.json: a byte-level BPE of `n` tokens (printable ASCII characters, then merged
// pairs), GPT-2 pre-tokenizer, "<|endoftext|>" as the last, special, token.
nlohmann::json TinyTokenizerJson(int64_t n);

// Writes config.json, tokenizer.json, tokenizer_config.json and model.safetensors for the
// tiny GGUF `g` (llama, qwen2, qwen3 or gemma3) as a Hugging Face folder would hold them.
// `dtype`: "F32" or "BF16" (BF16 from F32 by rounding to nearest even; the GGUF's float
// matrices must then be BF16 already for the two to hold the same values).
void WriteFolderFromGguf(const gguf::GgufFile& g, const std::string& hf_arch,
                         const std::string& dir, const std::string& dtype = "F32");

}  // namespace radixlm::hf::testing
