// Tiny random-weight GGUF models for the model tests, written with GgufWriter.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_value.h"

namespace radixlm::model::testing {

struct TinyModelSpec {
  std::string arch = "llama";  // written to general.architecture as is
  int64_t n_layers = 2;
  int64_t hidden = 64;
  int64_t ffn = 128;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 2;
  int64_t head_dim = 16;
  int64_t vocab = 100;
  int64_t sliding_window = 0;  // written as <arch>.attention.sliding_window when > 0
  float rope_base = 10000.0f;
  float rope_linear_factor = 0.0f;  // > 0: rope.scaling.type = linear
  bool rope_freqs = false;          // write a rope_freqs.weight tensor (llama-3 style)
  bool tied_output = true;          // false: write output.weight
  // Type of every weight matrix, overridable per tensor suffix ("attn_q.weight", ...,
  // "token_embd.weight", "output.weight"). A type whose block size does not divide the
  // matrix's row length falls back to Q8_0, then F32.
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;
  std::map<std::string, gguf::GgmlType> type_overrides;
  std::vector<std::string> omit_tensors;  // names left out (for error tests)
  std::vector<std::pair<std::string, gguf::Value>> extra_metadata;  // e.g. a tokenizer
  uint32_t seed = 1;
};

// A small Gemma-3: six layers, the last one global and the others windowed (4 tokens), one
// KV head, q_size (128) != hidden (64) as in gemma-3-270m, rope base 1e6.
TinyModelSpec TinyGemma3Spec();

// The serialized GGUF file.
std::vector<uint8_t> BuildTinyModel(const TinyModelSpec& spec);

// Parses bytes (which must outlive the result); asserts they are valid.
std::unique_ptr<gguf::GgufFile> ParseTinyModel(const std::vector<uint8_t>& bytes);

}  // namespace radixlm::model::testing
