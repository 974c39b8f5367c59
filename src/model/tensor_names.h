// GGUF tensor names of the supported architectures (llama.cpp's naming: "blk.N.attn_q.weight").
//
// Every architecture uses the same names; which per-layer tensors it needs differs, and that
// table lives here (LayerTensorRequired) so the loader and the tests agree on it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/model_config.h"

namespace radixlm::model {

inline constexpr std::string_view kTokenEmbdName = "token_embd.weight";    // [hidden, vocab]
inline constexpr std::string_view kOutputNormName = "output_norm.weight";  // [hidden]
inline constexpr std::string_view kOutputName = "output.weight";  // [hidden, vocab]; optional
inline constexpr std::string_view kRopeFreqsName = "rope_freqs.weight";  // [head_dim/2]; llama

// Per-layer tensors. Shapes in ggml order ([cols, rows]).
enum class LayerTensor {
  kAttnNorm,      // attn_norm.weight            [hidden]
  kAttnQ,         // attn_q.weight               [hidden, n_heads * head_dim]
  kAttnK,         // attn_k.weight               [hidden, n_kv_heads * head_dim]
  kAttnV,         // attn_v.weight               [hidden, n_kv_heads * head_dim]
  kAttnOutput,    // attn_output.weight          [n_heads * head_dim, hidden]
  kAttnQBias,     // attn_q.bias                 [n_heads * head_dim]     qwen2
  kAttnKBias,     // attn_k.bias                 [n_kv_heads * head_dim]  qwen2
  kAttnVBias,     // attn_v.bias                 [n_kv_heads * head_dim]  qwen2
  kAttnQNorm,     // attn_q_norm.weight          [head_dim]               gemma3, qwen3
  kAttnKNorm,     // attn_k_norm.weight          [head_dim]               gemma3, qwen3
  kPostAttnNorm,  // post_attention_norm.weight  [hidden]                 gemma3
  kFfnNorm,       // ffn_norm.weight             [hidden]
  kFfnGate,       // ffn_gate.weight             [hidden, ffn]
  kFfnUp,         // ffn_up.weight               [hidden, ffn]
  kFfnDown,       // ffn_down.weight             [ffn, hidden]
  kPostFfnNorm,   // post_ffw_norm.weight        [hidden]                 gemma3
  kCount,
};
inline constexpr int kNumLayerTensors = static_cast<int>(LayerTensor::kCount);

// "attn_q.weight", ...
std::string_view LayerTensorSuffix(LayerTensor t);
// "blk.<layer>.<suffix>"
std::string LayerTensorName(int64_t layer, LayerTensor t);
// Whether the architecture described by `config` needs this tensor in every layer.
bool LayerTensorRequired(const ModelConfig& config, LayerTensor t);

// Shape (ggml order) the tensor must have under `config`: {cols, rows} for matrices, {n} for
// vectors.
struct ExpectedShape {
  int64_t dims[2] = {0, 0};
  int n_dims = 0;
};
ExpectedShape LayerTensorShape(const ModelConfig& config, LayerTensor t);

}  // namespace radixlm::model
