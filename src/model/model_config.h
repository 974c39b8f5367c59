// ModelConfig: the hyper-parameters of a decoder-only transformer, read from GGUF metadata.
//
// One struct covers every supported architecture (gemma3, llama, qwen2, qwen3); the
// differences between them are flags (biases, Q/K norms, post-norms, activation, RoPE layout,
// sliding-window pattern) so the forward pass is one code path with per-architecture branches
// decided at load time, not per token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "util/status.h"

namespace radixlm::model {

enum class Architecture { kGemma3, kLlama, kQwen2, kQwen3 };

// "gemma3", "llama", "qwen2", "qwen3".
std::string_view ArchitectureName(Architecture arch);

// How RoPE pairs the values of a head (llama.cpp's LLAMA_ROPE_TYPE_NORM / _NEOX):
// kNormal rotates (x[2i], x[2i+1]); kNeox rotates (x[i], x[i + head_dim/2]).
enum class RopeLayout { kNormal, kNeox };

enum class FfnActivation { kSilu, kGeluTanh };  // the gate of a gated FFN: act(gate) * up

// What differs between the attention of one layer and another (gemma3 interleaves sliding
// window layers with global ones, each with its own RoPE base).
struct LayerAttentionConfig {
  int sliding_window = 0;  // 0: attends to the whole prefix; else to the last N positions
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;        // positions are multiplied by this (linear rope scaling)
  bool use_rope_freq_factors = false;  // divide per-pair frequencies by rope_freqs.weight
};

struct ModelConfig {
  Architecture arch = Architecture::kLlama;

  int64_t n_layers = 0;
  int64_t hidden_size = 0;  // embedding_length
  int64_t ffn_size = 0;     // feed_forward_length
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;    // key_length == value_length (checked)
  int64_t vocab_size = 0;  // rows of token_embd
  int64_t context_length = 0;
  float rms_norm_eps = 1e-6f;

  // RoPE.
  RopeLayout rope_layout = RopeLayout::kNormal;
  float rope_base = 10000.0f;          // rope.freq_base (global layers for gemma3)
  float rope_base_local = 10000.0f;    // sliding-window layers (gemma3)
  float rope_freq_scale = 1.0f;        // 1 / rope.scaling.factor for "linear" scaling
  bool has_rope_freq_factors = false;  // a rope_freqs.weight tensor (llama-3 scaling) exists

  // Sliding window: layer i is a sliding-window layer iff sliding_window > 0 and
  // (sliding_window_pattern == 0 || (i + 1) % sliding_window_pattern != 0).
  int64_t sliding_window = 0;
  int64_t sliding_window_pattern = 0;

  // Architecture features.
  bool qkv_bias = false;          // qwen2: attn_{q,k,v}.bias
  bool qk_norm = false;           // gemma3, qwen3: per-head RMSNorm of Q and K before RoPE
  bool post_norms = false;        // gemma3: post_attention_norm, post_ffw_norm
  bool scale_embeddings = false;  // gemma3: embeddings * sqrt(hidden_size)
  FfnActivation ffn_activation = FfnActivation::kSilu;
  float attention_scale = 1.0f;  // multiplies q·k
  // Gemma's graph multiplies Q by attention_scale before Q·K (llama.cpp scales Qcur); the
  // others scale the scores. Same math, different rounding once Q is stored in half precision.
  bool scale_query = false;

  int64_t q_size() const { return n_heads * head_dim; }      // width of Q rows
  int64_t kv_size() const { return n_kv_heads * head_dim; }  // width of K and V rows
  bool IsSlidingLayer(int64_t layer) const;
  LayerAttentionConfig LayerAttention(int64_t layer) const;

  // Reads and validates the config. Unknown architectures and missing or inconsistent keys
  // give InvalidArgument/Unimplemented naming the key.
  static StatusOr<ModelConfig> FromGguf(const gguf::GgufFile& file);

  std::string DebugString() const;
};

}  // namespace radixlm::model
