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
  bool longrope = false;            // write rope_factors_{long,short}.weight (phi3)
  bool tied_output = true;          // false: write output.weight
  // Type of every weight matrix, overridable per tensor suffix ("attn_q.weight", ...,
  // "token_embd.weight", "output.weight"). A type whose block size does not divide the
  // matrix's row length falls back to Q8_0, then F32.
  gguf::GgmlType matrix_type = gguf::GgmlType::kF32;
  std::map<std::string, gguf::GgmlType> type_overrides;
  std::vector<std::string> omit_tensors;   // names left out (for error tests)
  std::vector<std::string> extra_vectors;  // [hidden] F32 tensors written as well (ditto)
  // Mixture of experts (n_experts > 0): <arch>.expert_count / expert_used_count (and, for
  // qwen3moe, expert_feed_forward_length = expert_ffn), an F32 router and stacked expert
  // tensors in place of the dense FFN. For llama (Mixtral) the experts are ffn wide.
  int64_t n_experts = 0;
  int64_t n_experts_used = 0;
  int64_t expert_ffn = 0;
  // qwen35 / qwen35moe / qwen3next: NextN (multi-token-prediction) layers after the n_layers
  // decoder layers (block_count counts both; <arch>.nextn_predict_layers), each a full-attention
  // layer with the family's FFN and nextn.eh_proj / enorm / hnorm / shared_head_norm (and
  // nextn.shared_head_head with nextn_own_head). nextn_eh_identity: eh_proj passes the
  // normed embedding half through (identity plus noise) and scales the hidden half down, so
  // the layer's drafts often agree with a target model whose residual stream the token's
  // embedding dominates (residual_write_scale below): drafts kept and rejected both.
  int64_t nextn_layers = 0;
  bool nextn_own_head = false;
  bool nextn_eh_identity = false;
  // qwen35 / qwen35moe / qwen3next: scales the matrices that write into the residual stream
  // (attn_output, ssm_out, the FFN's down projections), so that with a small value the token's
  // own embedding dominates each position's output (a model whose next token the NextN layer
  // can often guess).
  float residual_write_scale = 1.0f;
  std::vector<std::pair<std::string, gguf::Value>> extra_metadata;  // e.g. a tokenizer
  uint32_t seed = 1;
};

// A small Gemma-3: six layers, the last one global and the others windowed (4 tokens), one
// KV head, q_size (128) != hidden (64) as in gemma-3-270m, rope base 1e6.
TinyModelSpec TinyGemma3Spec();

// A small Gemma 4 (written by its own path: its layers differ by kind): five layers, 0, 1 and 3
// sliding (window 4, head size 16, 2 KV heads), 2 and 4 global (head size 32, 1 KV head,
// proportional RoPE on a quarter of the pairs); 3 and 4 read layers 1's and 2's K/V and have a
// double-wide FFN; layer 0 has no attn_v (V is K's projection); per-layer inputs of width 8,
// per-layer output scales, final soft-cap 3.
TinyModelSpec TinyGemma4Spec();

// One small model per family added after the first four (model/families/), with the family's
// own metadata written through extra_metadata:
// gemma2: four layers alternating sliding (4 tokens) and global, soft-caps 2 (attention) and 3
// (logits) so tanh bends them; granite: every multiplier set (embedding 12, residual 0.22,
// attention 0.125, logit scale 8); olmo2: no GQA (q_size == hidden), untied output; smollm3:
// five layers, layer 3 without RoPE, one KV head; phi3: fused QKV and gate-up, LongRoPE
// factors with original context 2048 (under the 4096 written: the long ones apply) and
// attention factor 1.19; glm4: pre- and post-norms, fused gate-up, Q/K/V biases, RoPE on half
// of each head (rope.dimension_count 8 of 16); mistral3: YaRN x4 over an original context of 8
// and attention temperature 0.5.
TinyModelSpec TinyGemma2Spec();
TinyModelSpec TinyGraniteSpec();
TinyModelSpec TinyOlmo2Spec();
TinyModelSpec TinyPhi3Spec();
TinyModelSpec TinyGlm4Spec();
TinyModelSpec TinyMistral3Spec();
TinyModelSpec TinySmolLm3Spec();

// Mixtures of experts: qwen3moe (Q/K norms, NeoX RoPE) with 8 experts of 32, 3 per token;
// Mixtral (a llama file with llama.expert_count) with 4 experts of ffn (128), 2 per token.
TinyModelSpec TinyQwen3MoeSpec();
TinyModelSpec TinyMixtralSpec();

// A small Qwen 3.5 (qwen35, written by its own path): five layers, the fourth (index 3) full
// attention (4 heads of 16, 2 KV heads, Q with its output gate, RoPE on half of each head with
// sections 2/1/1/0), the others gated DeltaNet (convolution of 4 taps over 128 channels, 2 key
// heads and 4 value heads of 16); untied output.
TinyModelSpec TinyQwen35Spec();
// Its MoE relatives, with the same layers: qwen35moe with 8 experts of 32, 3 per token, and a
// shared expert of 48 behind its sigmoid gate in every layer; qwen3next as that, with plain
// NeoX RoPE (no sections), a fused ssm_ba and value heads grouped by key head.
TinyModelSpec TinyQwen35MoeSpec();
TinyModelSpec TinyQwen3NextSpec();

// The serialized GGUF file.
std::vector<uint8_t> BuildTinyModel(const TinyModelSpec& spec);

// Parses bytes (which must outlive the result); asserts they are valid.
std::unique_ptr<gguf::GgufFile> ParseTinyModel(const std::vector<uint8_t>& bytes);

}  // namespace radixlm::model::testing
