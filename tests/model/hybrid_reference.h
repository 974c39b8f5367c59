// A plain float reference forward of a hybrid (qwen35, qwen35moe, qwen3next) model for the
// tests, written for
// clarity, not speed: every weight dequantized up front, each call recomputes the whole
// sequence from the first token with naive loops in double, the gated DeltaNet layers in
// their recurrent form exactly as llama.cpp's graph states it (src/models/qwen35.cpp,
// qwen35moe.cpp, qwen3next.cpp, delta-net-base.cpp), the full-attention layers over every
// earlier position, the experts of a MoE layer by a full softmax over the router's logits. As in
// ReferenceModel (reference_model.h), K and V are rounded through the cache's half type so
// the comparison can be tight; the weights must be F32 (no activation rounding is mirrored).
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_file.h"
#include "model/model_config.h"

namespace radixlm::model::testing {

class HybridReference {
 public:
  explicit HybridReference(const gguf::GgufFile& file);

  const ModelConfig& config() const { return config_; }

  // Logits after each token of `tokens`: [tokens.size()][vocab]; with `hidden`, also each
  // token's final-normed hidden state (the LM head's input): [tokens.size()][hidden].
  std::vector<std::vector<float>> Forward(const std::vector<int32_t>& tokens,
                                          std::vector<std::vector<float>>* hidden = nullptr) const;

  // The file's first NextN layer (nextn_reference.cc; llama.cpp's qwen35 graph_mtp) over a
  // sequence: token t at position t beside hidden_in[t] (the target's hidden state of
  // position t - 1); its logits after each token and its own final-normed hidden states.
  struct NextnOutput {
    std::vector<std::vector<float>> logits;  // [tokens][vocab]
    std::vector<std::vector<float>> hidden;  // [tokens][hidden]
  };
  NextnOutput NextnForward(const std::vector<int32_t>& tokens,
                           const std::vector<std::vector<float>>& hidden_in) const;

 private:
  struct Matrix {
    int64_t rows = 0;
    int64_t cols = 0;
    std::vector<float> w;  // [rows, cols]
  };
  struct Layer {
    std::vector<float> attn_norm, post_attn_norm, q_norm, k_norm;
    Matrix wq, wk, wv, wo, gate, up, down;  // gate, up, down: the shared expert with experts
    // Mixture of experts: the router, per expert its matrices, the shared expert's gate.
    Matrix router;
    std::vector<Matrix> exp_gate, exp_up, exp_down;
    std::vector<float> shexp_gate;
    // Gated DeltaNet.
    Matrix qkv, z, beta, alpha, out;
    std::vector<float> conv, dt, a, ssm_norm;  // conv: [channels][taps]
  };

  std::vector<float> MatVec(const Matrix& m, const std::vector<float>& x) const;
  std::vector<float> RmsNorm(const float* x, int64_t n, const std::vector<float>& w) const;
  // One linear layer over the whole sequence: xn[t] -> output[t].
  std::vector<std::vector<float>> Linear(const Layer& l,
                                         const std::vector<std::vector<float>>& xn) const;
  std::vector<std::vector<float>> Attention(const Layer& l,
                                            const std::vector<std::vector<float>>& xn) const;
  // The FFN of one token's normed input.
  std::vector<float> Ffn(const Layer& l, const std::vector<float>& fn) const;

  // The NextN layer's tensors (nextn_reference.cc), when the file has one.
  void LoadNextn(const gguf::GgufFile& file);
  Layer LoadLayer(const gguf::GgufFile& file, int64_t block, bool linear) const;
  struct Nextn {
    Layer layer;
    Matrix eh_proj, head;  // head: shared_head_head, else the model's output
    std::vector<float> enorm, hnorm, head_norm;
    bool present = false;
  };

  ModelConfig config_;
  Nextn nextn_;
  Matrix token_embd_, output_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
};

}  // namespace radixlm::model::testing
