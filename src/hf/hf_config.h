// config.json of a Hugging Face checkpoint -> the GGUF metadata keys radixlm's model families
// read (general.architecture, <arch>.block_count, ...), written as llama.cpp's
// convert_hf_to_gguf.py writes them for the same architecture, and how its tensors are renamed
// and transformed on the way (hf_tensors.h).
//
// Architectures: LlamaForCausalLM and MistralForCausalLM (-> llama, Q/K rows permuted to
// interleaved-pair RoPE), Qwen2ForCausalLM (-> qwen2), Qwen3ForCausalLM (-> qwen3),
// Gemma3ForCausalLM (-> gemma3, text only: RMSNorm weights stored as w where the model uses
// 1 + w, so 1 is added), BertModel, XLMRobertaModel and XLMRobertaForMaskedLM (-> bert, an
// encoder: hf_bert.h), NomicBertModel (->
// nomic-bert, an encoder: hf_nomic_bert.h). Any other value of
// "architectures" is Unimplemented naming it.
// rope_scaling: linear, yarn, and llama3 (frequency factors computed as the converter does).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_value.h"
#include "util/status.h"

namespace radixlm::hf {

struct HfArchitecture {
  std::string hf_name;         // "LlamaForCausalLM"
  std::string arch;            // GGUF general.architecture: "llama"
  std::string model_type;      // config.json's model_type
  bool permute_qk = false;     // llama-style: Q/K rows reordered for interleaved-pair RoPE
  bool norm_plus_one = false;  // gemma: every *norm.weight gets + 1
  bool gemma_naming = false;   // pre/post feed-forward norms (gemma's four norms per layer)
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t vocab_size = 0;  // config.json's vocab_size (0 when absent)
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // "bfloat16", "float16", "float32" or ""
  std::vector<std::pair<std::string, gguf::Value>> metadata;  // the <arch>.* and general.* keys
  // rope_scaling "llama3" (Llama 3.1+): the per-pair frequency factors the converter writes as
  // rope_freqs.weight ([head_dim / 2]); empty otherwise.
  std::vector<float> rope_freq_factors;
  // XLM-RoBERTa: rows at the start of the position embeddings that no position uses
  // (pad_token_id + 1); they are skipped, as the converter drops them.
  int64_t position_row_offset = 0;
};

// `config` is config.json's object; `path` names it in errors.
StatusOr<HfArchitecture> ReadHfConfig(const nlohmann::json& config, const std::string& path);

// The config.json "architectures" radixlm reads, for messages.
std::string SupportedHfArchitectures();

}  // namespace radixlm::hf
