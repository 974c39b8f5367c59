// Synthetic LoRA adapters for the tests (llama.cpp's GGUF adapter form, model/lora_adapter.h)
// and the same adapter merged into its base's float weights (W + scale * B A), which the plain
// reference forward then runs as an ordinary model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_file.h"

namespace radixlm::model::testing {

struct LoraSpec {
  int64_t rank = 4;
  float alpha = 8.0f;  // written as adapter.lora.alpha; scale = alpha / rank
  gguf::GgmlType type = gguf::GgmlType::kF32;  // of lora_a / lora_b: F32, F16 or Q8_0
  // Stems of the adapted matrices in every layer.
  std::vector<std::string> targets = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                                      "ffn_gate", "ffn_up", "ffn_down"};
  float stddev = 0.05f;  // of A's and B's normal entries
  uint32_t seed = 7;
  std::string arch;  // "": the base's general.architecture
};

// The adapter for `base` (its matrices' shapes), serialized.
std::vector<uint8_t> BuildLoraAdapter(const gguf::GgufFile& base, const LoraSpec& spec);

// `base` (float matrices) with the adapter's B A * scale added to each adapted matrix, as an
// F32 model file; every other tensor and key copied.
std::vector<uint8_t> MergeLoraIntoBase(const gguf::GgufFile& base, const gguf::GgufFile& adapter);

}  // namespace radixlm::model::testing
