// Tiny deepseek2 files the tests write, and a textbook float reference of their forward pass.
//
// The reference runs multi-head latent attention the way the paper writes it, not the absorbed
// way the model does: per head it expands the cached latent into a key (attn_k_bᵀ · latent,
// then the shared roped part) and a value (attn_v_b · latent), and attends in double over
// those, with no half-precision rounding anywhere. RoPE with YaRN, DeepSeek's attention scale,
// the leading dense layers, softmax or sigmoid routing with the selection bias and expert
// groups, weight normalization and scaling, and the shared expert are written out from
// llama.cpp's definitions here, independently of src/model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "gguf/gguf_file.h"

namespace radixlm::model::testing {

struct DeepSeek2Spec {
  int64_t n_layers = 3;
  int64_t n_dense_layers = 1;  // leading_dense_block_count
  int64_t hidden = 64;
  int64_t n_heads = 4;
  int64_t kv_rank = 32;    // kv_lora_rank
  int64_t q_rank = 0;      // q_lora_rank (0: plain attn_q, as V2-Lite)
  int64_t nope = 32;       // qk_nope_head_dim
  int64_t rope = 16;       // qk_rope_head_dim
  int64_t value_dim = 32;  // v_head_dim
  int64_t dense_ffn = 96;
  int64_t vocab = 96;
  int64_t n_experts = 8;
  int64_t n_experts_used = 2;
  int64_t expert_ffn = 32;
  int64_t n_shared = 1;
  int gating = 1;  // expert_gating_func: 1 softmax (V2), 2 sigmoid (V3); 0: key not written
  bool probs_bias = false;  // exp_probs_b.bias (V3)
  int64_t n_groups = 0;     // expert_group_count (0: none)
  int64_t n_groups_used = 0;
  bool weights_norm = false;
  float weights_scale = 1.0f;  // expert_weights_scale (1: key not written)
  // YaRN over an original context of 16 (the ramp bends the pairs within a short prompt), with
  // yarn_log_multiplier = 0.1 * mscale_all_dim.
  float yarn_factor = 4.0f;
  float mscale_all_dim = 0.707f;
  // "mistral4": the same file under mistral4's name, with Llama 4's attention temperature
  // (attention.temperature_scale / temperature_length) when temperature_scale != 0.
  std::string arch = "deepseek2";
  float temperature_scale = 0.0f;
  int64_t temperature_length = 8;
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;
  bool fused_kv_b = false;     // an old file: attn_kv_b instead of attn_k_b / attn_v_b
  bool fused_gate_up = false;  // ffn_gate_up_exps (per expert: gate rows, then up rows)
  uint32_t seed = 11;
};

// The spec as a GGUF file in memory (random weights of a realistic size).
std::vector<uint8_t> BuildDeepSeek2(const DeepSeek2Spec& spec);

// Logits after each token of `tokens` ([tokens.size()][vocab]) of a file BuildDeepSeek2 wrote.
std::vector<std::vector<float>> DeepSeek2ReferenceForward(const gguf::GgufFile& file,
                                                          const DeepSeek2Spec& spec,
                                                          const std::vector<int32_t>& tokens);

}  // namespace radixlm::model::testing
