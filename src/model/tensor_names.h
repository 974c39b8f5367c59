// GGUF tensor names and shapes shared by every model family (llama.cpp's naming:
// "blk.N.attn_q.weight").
//
// Every family uses the same names; which per-layer tensors a layer has is the family's choice
// (ModelConfig::layer_tensors), starting from StandardLayerTensors, the set the config's flags
// imply, so the loader, the forward pass and the tests agree on it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/layer_tensor.h"
#include "model/model_config.h"

namespace radixlm::model {

inline constexpr std::string_view kTokenEmbdName = "token_embd.weight";    // [hidden, vocab]
inline constexpr std::string_view kOutputNormName = "output_norm.weight";  // [hidden]
inline constexpr std::string_view kOutputName = "output.weight";  // [hidden, vocab]; optional
inline constexpr std::string_view kRopeFreqsName = "rope_freqs.weight";  // [rope_dims/2]; llama
// LongRoPE's per-pair factors (phi3): the long ones once the context exceeds
// ModelConfig::rope_original_context, else the short ones. [rope_dims/2] each.
inline constexpr std::string_view kRopeFactorsLongName = "rope_factors_long.weight";
inline constexpr std::string_view kRopeFactorsShortName = "rope_factors_short.weight";
// Per-layer inputs (gemma4; P = ModelConfig::per_layer_input_size):
inline constexpr std::string_view kPerLayerTokenEmbdName =
    "per_layer_token_embd.weight";  // [P * n_layers, vocab]
inline constexpr std::string_view kPerLayerModelProjName =
    "per_layer_model_proj.weight";  // [hidden, P * n_layers]
inline constexpr std::string_view kPerLayerProjNormName = "per_layer_proj_norm.weight";  // [P]

// "attn_q.weight", ...
std::string_view LayerTensorSuffix(LayerTensor t);
// "blk.<layer>.<suffix>"
std::string LayerTensorName(int64_t layer, LayerTensor t);
// The tensors a layer needs under `config`'s flags: the projections (Q, K, V, or QKV fused with
// fused_qkv) and the FFN (gate and up, or up alone with fused_gate_up) always; the input norms
// with pre_norms, the Q/K/V biases with qkv_bias (optional otherwise), the Q/K norms with
// qk_norm, the post-norms with post_norms; with n_experts > 0 the router and the experts'
// gate, up and down in place of the dense FFN's.
LayerTensorNeeds StandardLayerTensors(const ModelConfig& config);

// Shape (ggml order) the tensor must have under `config`: {cols, rows} for matrices, {n} for
// vectors, {cols, rows, n_experts} for the experts' stacked matrices.
struct ExpectedShape {
  int64_t dims[3] = {0, 0, 0};
  int n_dims = 0;
};
// Head sizes, KV heads and FFN widths are those of `layer` (ModelConfig::LayerAttention).
ExpectedShape LayerTensorShape(const ModelConfig& config, LayerTensor t, int64_t layer = 0);

}  // namespace radixlm::model
