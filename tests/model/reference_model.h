// A plain float reference forward for the model tests, written for clarity, not speed.
//
// Every weight is dequantized to float up front; each call recomputes the whole sequence from
// scratch with naive loops (no KV cache, no batching, no threads). Two numeric details follow
// the optimized path on purpose, so that the comparison can be tight:
//   * K and V are rounded through the KV cache's half-precision format (Q only through BF16,
//     with a BF16 cache: kernels/attention.h);
//   * a matmul input is rounded through the activation format the weight type is dotted
//     with (Q8_0 / Q8_K for quantized weights, see kernels/dot.h), as the kernels do.
// ReferenceOptions can turn those roundings off, or add llama.cpp's one-query attention
// accumulator, for bench/reference_forward.cc (how far such choices move the next token).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/attention.h"
#include "model/model_config.h"

namespace radixlm::model::testing {

struct ReferenceOptions {
  bool round_activations = true;  // matmul inputs through Q8_0 / Q8_K (see above)
  bool round_kv = true;           // K and V through the cache's half type (Q: BF16 only)
  // Attention as llama.cpp's one-query flash-attention kernel: Q rounded to F16, keys in order
  // with an online softmax in float, the output accumulated in F16 (rounded after every scale
  // and add).
  bool f16_attention_accumulator = false;
};

// Rows given in place of token embeddings from position begin on (an image's embeddings; not
// scaled), optionally attended bidirectionally within the span (model/forward_batch.h).
struct ReferenceEmbeddingSpan {
  int64_t begin = 0;
  // [n][hidden], or [n][hidden * (1 + n_deepstack_layers)] (qwen3vl: slice k + 1 is added
  // after layer k).
  std::vector<std::vector<float>> rows;
  bool bidirectional = false;
};

class ReferenceModel {
 public:
  ReferenceModel(const gguf::GgufFile& file, kernels::KvDtype kv_dtype,
                 ReferenceOptions options = {});

  const ModelConfig& config() const { return config_; }

  // M-RoPE (ModelConfig::mrope()): each token's (t, h, w) rotary positions for the next
  // Forward calls, [tokens][3]; empty (the default): token i is at (i, i, i).
  void SetRopePositions(std::vector<std::array<int64_t, 3>> positions) {
    rope_positions_ = std::move(positions);
  }

  // Logits after each token of `tokens`: [tokens.size()][vocab].
  // spans: rows given in place of some tokens' embeddings (ids there are not read).
  std::vector<std::vector<float>> Forward(
      const std::vector<int32_t>& tokens,
      const std::vector<ReferenceEmbeddingSpan>& spans = {}) const;
  // The final norm's output after each token (what the output head multiplies; a decoder
  // embedder's pooled rows): [tokens.size()][hidden].
  std::vector<std::vector<float>> ForwardHidden(
      const std::vector<int32_t>& tokens,
      const std::vector<ReferenceEmbeddingSpan>& spans = {}) const;

 private:
  struct Matrix {
    gguf::GgmlType type = gguf::GgmlType::kF32;  // storage type (picks the activation format)
    int64_t rows = 0;
    int64_t cols = 0;
    std::vector<float> w;  // [rows, cols]
  };
  struct Layer {
    std::vector<float> attn_norm, bq, bk, bv, q_norm, k_norm, post_attn_norm, ffn_norm,
        post_ffn_norm;
    Matrix wq, wk, wv, wo, gate, up, down;
    // Per-layer inputs and output scale (gemma4), or empty.
    Matrix per_layer_inp_gate, per_layer_proj;
    std::vector<float> per_layer_post_norm, out_scale;
    // Mixture of experts: the router and each expert's matrices ([n_experts]), or empty.
    Matrix router;
    std::vector<Matrix> gate_exps, up_exps, down_exps;
    // gpt-oss: the attention output's bias, the sink logits ([n_heads]), the router's bias and
    // each expert's biases ([n_experts][rows]), or empty.
    std::vector<float> bo, sinks, router_b;
    std::vector<std::vector<float>> gate_exps_b, up_exps_b, down_exps_b;
  };

  Matrix LoadMatrix(const gguf::GgufFile& file, const std::string& name) const;
  // The [cols, rows] matrices of a [cols, rows, n] tensor.
  std::vector<Matrix> LoadExperts(const gguf::GgufFile& file, const std::string& name) const;
  // The FFN of one token's normalized input: gated, or the mixture of experts.
  std::vector<float> Ffn(const Layer& l, const std::vector<float>& xn) const;
  // (Biases: empty, or one per row of gate / up / down.)
  std::vector<float> GatedFfn(const Matrix& gate, const Matrix& up, const Matrix& down,
                              const std::vector<float>& xn, const std::vector<float>& gate_b = {},
                              const std::vector<float>& up_b = {},
                              const std::vector<float>& down_b = {}) const;
  static Matrix RowRange(const Matrix& m, int64_t first, int64_t rows);
  std::vector<float> LoadVector(const gguf::GgufFile& file, const std::string& name) const;
  std::vector<float> MatVec(const Matrix& m, const std::vector<float>& x) const;
  std::vector<float> RmsNorm(const std::vector<float>& x, const std::vector<float>& w) const;
  // RMSNorm without a weight (an empty w above means no norm at all).
  std::vector<float> RmsNormUnweighted(const std::vector<float>& x) const;
  // Rotates the first rope_dims values of a head (NeoX: pairs rope_dims / 2 apart) of token t
  // (at position t, or at rope_positions_[t] by M-RoPE section).
  void Rope(float* head, int64_t t, bool sliding, int64_t rope_dims) const;
  // Each token's per-layer inputs (gemma4): [n][n_layers * per_layer_input_size].
  std::vector<std::vector<float>> PerLayerInputs(const std::vector<int32_t>& tokens,
                                                 const std::vector<std::vector<float>>& x) const;
  // One head's output for one query from its scores over `keys`, the F16-accumulator way.
  void F16AccumulatorAttention(const std::vector<double>& scores, const std::vector<int64_t>& keys,
                               const std::vector<std::vector<float>>& v, int64_t kv_head, int64_t d,
                               float* out) const;
  float RoundKv(float x) const;     // a K or V value as the cache stores it
  float RoundQuery(float x) const;  // a query value as attention rounds it (see options_)

  ModelConfig config_;
  kernels::KvDtype kv_dtype_;
  ReferenceOptions options_;
  Matrix token_embd_;
  Matrix output_;
  std::vector<float> output_norm_;
  std::vector<float> rope_freqs_;
  std::vector<std::array<int64_t, 3>> rope_positions_;
  Matrix per_layer_token_embd_, per_layer_model_proj_;  // gemma4, or empty
  std::vector<float> per_layer_proj_norm_;
  std::vector<Layer> layers_;
};

}  // namespace radixlm::model::testing
