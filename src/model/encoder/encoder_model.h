// EncoderModel: a BERT-family text encoder (GGUF architectures "bert" and "nomic-bert"), as
// llama.cpp's src/models/bert.cpp builds them, and its CPU forward pass.
//
//   x = LayerNorm(token_embd[id] + token_types[0] (+ position_embd[pos], bert))
//   per layer:  a = Attention(x)             bidirectional: every token sees its sequence
//               x = LayerNorm(x + a)         attn_output_norm (post-norm)
//               x = LayerNorm(x + FFN(x))    layer_output_norm
// bert: Q, K, V and the output projection with biases, absolute position embeddings, FFN
// down(GELU(up x + b) ) + b. nomic-bert: Q, K and V in one attn_qkv, NeoX RoPE on Q and K, FFN
// down(SiLU(gate x) * up x), no biases where the file has none. Every LayerNorm has a weight and
// a bias and <arch>.attention.layer_norm_epsilon. The output is each token's final hidden state;
// pooling is the caller's.
//
// Bidirectional attention means an encoder never continues a cached prefix: each sequence runs
// whole in one Forward() and no K/V outlives it (the serving engine keeps encoders out of the
// radix tree; engine/encoder_runner.h). Rows do not depend on the batch they run in: the matmuls
// are batch-invariant (kernels/matmul.h) and attention runs per sequence.
//
// Thread-safety: Forward() uses the model's scratch; one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "model/rotary.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace radixlm::model {

struct EncoderConfig {
  std::string arch;  // "bert" | "nomic-bert"
  int64_t n_layers = 0;
  int64_t hidden_size = 0;
  int64_t ffn_size = 0;
  int64_t n_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  int64_t context_length = 0;  // <arch>.context_length (bert: rows of position_embd)
  float norm_eps = 1e-12f;
  bool rope = false;  // nomic-bert: NeoX RoPE with rope_base, no position_embd
  float rope_base = 10000.0f;
  bool gated_ffn = false;    // nomic-bert: SwiGLU with ffn_gate; bert: GELU
  int64_t pooling_type = 0;  // <arch>.pooling_type as stored (llama.cpp's values); 0 absent
};

// Whether `architecture` (general.architecture) is an encoder this class runs.
bool IsEncoderArchitecture(std::string_view architecture);

class EncoderModel {
 public:
  struct Options {
    int n_threads = 0;  // <= 0: one per hardware thread
  };
  // Reads the config and checks every tensor (errors name the key or tensor).
  static StatusOr<std::unique_ptr<EncoderModel>> FromGguf(std::unique_ptr<gguf::GgufFile> file,
                                                          const Options& options);
  ~EncoderModel();
  EncoderModel(const EncoderModel&) = delete;
  EncoderModel& operator=(const EncoderModel&) = delete;

  const EncoderConfig& config() const { return config_; }
  const gguf::GgufFile& gguf() const { return *file_; }
  ThreadPool* pool() { return pool_.get(); }
  int64_t weights_bytes() const;

  // Runs every sequence whole; `hidden` becomes [sum of lengths, hidden_size], the rows of the
  // sequences in order. InvalidArgument for an empty sequence, one longer than
  // context_length, or an id outside the vocabulary.
  Status Forward(std::span<const std::span<const int32_t>> sequences, std::vector<float>* hidden);

 private:
  struct Layer;
  EncoderModel() = default;
  Status LoadWeights();
  void RunLayer(const Layer& layer, std::span<const std::span<const int32_t>> sequences,
                int64_t n_tokens);

  // The layers' matrices repacked for the kernels' GEMM (kernels::KernelBackend's
  // prepare_weights, as the decoder's weights are); their file pages released.
  void PrepareMatrices();

  std::unique_ptr<gguf::GgufFile> file_;
  std::vector<std::unique_ptr<kernels::PackedWeights>> prepared_;
  int64_t resident_bytes_ = 0;  // of the weights, as the forward pass reads them
  EncoderConfig config_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<RotaryEmbedding> rope_;

  kernels::WeightMatrix token_embd_, token_types_, position_embd_;
  bool has_token_types_ = false;
  const float* embd_norm_w_ = nullptr;
  const float* embd_norm_b_ = nullptr;
  std::vector<Layer> layers_;

  // Scratch, grown to the largest batch.
  std::vector<float> x_, qkv_, q_, k_, v_, attn_, proj_, up_, gate_, cos_, sin_;
  std::vector<uint16_t> k_cache_, v_cache_;  // F16 K / V rows of the batch
  std::vector<int64_t> positions_, last_pos_;
  std::vector<int32_t> ids_, slots_;
  std::vector<float> row_;
  std::vector<kernels::AttentionSequence> seqs_;
};

}  // namespace radixlm::model
